/* Echo server on raw io_uring, in C: the io_uring floor, beside epoll_echo.c's.
 *
 * Pure byte echo (bench/echo/README.md), the way io_uring is fastest today (liburing
 * 2.3 API, Linux >= 5.19 for provided-buffer rings, 6.1 for DEFER_TASKRUN):
 * - one multishot accept on the listener: one SQE for every connection;
 * - one multishot recv per connection, into a ring of provided buffers shared by all
 *   connections (the kernel picks the buffer, so an idle connection holds none);
 * - each received buffer is sent back as is and returned to the ring when its send
 *   completes; a connection's sends go out one at a time, in order (a 64 KiB message
 *   arrives as several buffers);
 * - one io_uring_submit_and_wait per iteration: every SQE the last batch of
 *   completions produced goes in with the same io_uring_enter that waits for more.
 * TCP_NODELAY on every connection, as asyncio does. When the buffer ring runs dry,
 * a multishot recv ends with ENOBUFS; that connection's recv is re-armed once a
 * send has given a buffer back.
 *
 * --fixed-files (issue 19): each accepted fd is also registered in a sparse table of
 * fixed files, at slot = fd, and its recv and sends name the slot (IOSQE_FIXED_FILE),
 * so that the kernel skips the fd-table lookup and the file reference (fget/fput) per
 * SQE. The fd stays a real fd (setsockopt, close), as it must in corio; the table's
 * reference keeps the socket open, so the slot is emptied before the close.
 *
 * Usage: uring_echo [--port P] [--fixed-files]   (127.0.0.1; P = 0 picks a free port)
 * Prints "listening on 127.0.0.1:PORT" as its first line (as `corio echo-server`
 * does), then serves until killed. Exits with a message if io_uring is unusable.
 */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo_args.h"

/* 1,024 buffers of 64 KiB: 64 MiB, what epoll_echo's 64 KiB per connection costs at
 * 1,000 connections; 64 KiB as epoll_echo's reads, so that a 64 KiB message can be
 * one recv and one send here too. With 16 KiB buffers a 64 KiB message at 10
 * connections cost 32 µs of server CPU in one run, with 64 KiB 21 (epoll_echo: 13-14).
 * The kernel takes buffers from the ring in FIFO order, so all of them cycle through
 * the cache: at 64 KiB x 10 connections 64 buffers cost 15-16 µs a message, 1,024
 * 19-20; but 64 starve 1,000 connections (ENOBUFS re-arms: 3.8-5.1 µs against 3.6-4.3
 * at 1 KiB). A power of two, as the buffer ring requires. */
enum { BUF_SIZE = 65536, BUF_COUNT = 1024, BGID = 1, RING_SIZE = 4096 };
/* --fixed-files: slots 0..FIXED_SLOTS-1, enough for 1,000 connections' fds; an fd
 * beyond them is used as a plain fd. */
enum { FIXED_SLOTS = 4096 };
enum op { OP_ACCEPT = 1, OP_RECV = 2, OP_SEND = 3 }; /* user_data's low 2 bits */

struct chunk { /* one received buffer waiting for (the rest of) its send */
  unsigned short bid;
  unsigned len, off;
};

struct conn {
  int fd;
  int file;                /* what the SQEs name: fd, or its fixed-file slot */
  unsigned char sqe_flags; /* IOSQE_FIXED_FILE when file is a slot */
  int sending;   /* a send is in flight: chunks[head] */
  int receiving; /* the multishot recv is armed */
  int eof;       /* the peer is gone: free once the last send is back */
  int starved;   /* on the starved list: freed by rearm_starved, not before */
  unsigned head, count, cap;
  struct chunk* chunks; /* FIFO, cap entries */
  struct conn* next_starved; /* on the list of recvs ended by ENOBUFS */
};

static struct io_uring ring;
static struct io_uring_buf_ring* bufs;
static unsigned char* buf_mem;
static struct conn* starved; /* connections to re-arm once buffers come back */
static int fixed_files;      /* --fixed-files */

static void die(const char* what, int err) {
  fprintf(stderr, "uring_echo: %s: %s\n", what, strerror(err));
  exit(1);
}

static struct io_uring_sqe* sqe_get(void) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  if (!sqe) { /* the SQ is full: hand it to the kernel and take a fresh slot */
    io_uring_submit(&ring);
    sqe = io_uring_get_sqe(&ring);
    if (!sqe) die("io_uring_get_sqe", EBUSY);
  }
  return sqe;
}

static void tag(struct io_uring_sqe* sqe, void* p, enum op op) {
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)p | op);
}

static void give_back(unsigned short bid) {
  io_uring_buf_ring_add(bufs, buf_mem + (size_t)bid * BUF_SIZE, BUF_SIZE, bid,
                        io_uring_buf_ring_mask(BUF_COUNT), 0);
  io_uring_buf_ring_advance(bufs, 1);
}

static void arm_recv(struct conn* c) {
  struct io_uring_sqe* sqe = sqe_get();
  io_uring_prep_recv_multishot(sqe, c->file, NULL, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT | c->sqe_flags;
  sqe->buf_group = BGID;
  tag(sqe, c, OP_RECV);
  c->receiving = 1;
}

static void send_head(struct conn* c) {
  struct chunk* k = &c->chunks[c->head];
  struct io_uring_sqe* sqe = sqe_get();
  io_uring_prep_send(sqe, c->file, buf_mem + (size_t)k->bid * BUF_SIZE + k->off, k->len - k->off,
                     MSG_NOSIGNAL);
  sqe->flags |= c->sqe_flags;
  tag(sqe, c, OP_SEND);
  c->sending = 1;
}

static void maybe_free(struct conn* c) {
  if (!c->eof || c->sending || c->receiving || c->starved) return;
  while (c->count) { /* chunks never sent: the peer is gone */
    give_back(c->chunks[c->head].bid);
    c->head = (c->head + 1) % c->cap;
    --c->count;
  }
  if (c->sqe_flags & IOSQE_FIXED_FILE) {
    int none = -1;
    io_uring_register_files_update(&ring, (unsigned)c->file, &none, 1);
  }
  close(c->fd);
  free(c->chunks);
  free(c);
}

static void push_chunk(struct conn* c, unsigned short bid, unsigned len) {
  if (c->count == c->cap) { /* grow, keeping FIFO order */
    struct chunk* grown = malloc(2 * c->cap * sizeof *grown);
    if (!grown) die("malloc", ENOMEM);
    for (unsigned i = 0; i < c->count; ++i) grown[i] = c->chunks[(c->head + i) % c->cap];
    free(c->chunks);
    c->chunks = grown;
    c->head = 0;
    c->cap *= 2;
  }
  c->chunks[(c->head + c->count) % c->cap] = (struct chunk){.bid = bid, .len = len, .off = 0};
  if (++c->count == 1) send_head(c);
}

static void on_recv(struct conn* c, const struct io_uring_cqe* cqe) {
  if (!(cqe->flags & IORING_CQE_F_MORE)) c->receiving = 0;
  if (cqe->res > 0) {
    push_chunk(c, (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT), (unsigned)cqe->res);
    if (!c->receiving) arm_recv(c); /* the kernel may end a multishot recv at any time */
  } else if (cqe->res == -ENOBUFS) {
    c->starved = 1;
    c->next_starved = starved;
    starved = c;
  } else { /* EOF or an error */
    c->eof = 1;
    maybe_free(c);
  }
}

static void rearm_starved(void) {
  while (starved) {
    struct conn* c = starved;
    starved = c->next_starved;
    c->starved = 0;
    if (c->eof) {
      maybe_free(c);
    } else {
      arm_recv(c);
    }
  }
}

static void on_send(struct conn* c, int res) {
  c->sending = 0;
  struct chunk* k = &c->chunks[c->head];
  if (res < 0) {
    c->eof = 1;
  } else if ((k->off += (unsigned)res) == k->len) {
    give_back(k->bid);
    c->head = (c->head + 1) % c->cap;
    --c->count;
    rearm_starved();
  }
  if (c->eof) {
    maybe_free(c);
  } else if (c->count) {
    send_head(c);
  }
}

static void on_accept(int lfd, const struct io_uring_cqe* cqe) {
  if (!(cqe->flags & IORING_CQE_F_MORE)) { /* the multishot accept ended: re-arm it */
    struct io_uring_sqe* sqe = sqe_get();
    io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
    tag(sqe, NULL, OP_ACCEPT);
  }
  if (cqe->res < 0) return; /* ECONNABORTED and the like: the next one comes */
  int one = 1;
  setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct conn* c = calloc(1, sizeof *c);
  if (!c) die("calloc", ENOMEM);
  c->fd = c->file = cqe->res;
  if (fixed_files && c->fd < FIXED_SLOTS &&
      io_uring_register_files_update(&ring, (unsigned)c->fd, &c->fd, 1) == 1)
    c->sqe_flags = IOSQE_FIXED_FILE;
  c->cap = 8;
  c->chunks = malloc(c->cap * sizeof *c->chunks);
  if (!c->chunks) die("malloc", ENOMEM);
  arm_recv(c);
}

static void setup_ring(void) {
  struct io_uring_params p = {0};
  /* One thread submits, and completions run when it waits: the kernel then does no
   * task_work interrupts between waits (6.1+). Older kernels get a plain ring. */
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  p.flags |= IORING_SETUP_CQSIZE;
  p.cq_entries = 4 * RING_SIZE;
  int err = io_uring_queue_init_params(RING_SIZE, &ring, &p);
  if (err == -EINVAL) {
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 4 * RING_SIZE;
    err = io_uring_queue_init_params(RING_SIZE, &ring, &p);
  }
  if (err < 0) die("io_uring_queue_init", -err);

  size_t ring_bytes = BUF_COUNT * sizeof(struct io_uring_buf);
  bufs = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  buf_mem = malloc((size_t)BUF_COUNT * BUF_SIZE);
  if (bufs == MAP_FAILED || !buf_mem) die("buffer memory", ENOMEM);
  io_uring_buf_ring_init(bufs);
  struct io_uring_buf_reg reg = {.ring_addr = (uint64_t)(uintptr_t)bufs,
                                 .ring_entries = BUF_COUNT, .bgid = BGID};
  err = io_uring_register_buf_ring(&ring, &reg, 0);
  if (err < 0) die("io_uring_register_buf_ring (Linux >= 5.19)", -err);
  for (unsigned i = 0; i < BUF_COUNT; ++i) give_back((unsigned short)i);
  if (fixed_files && (err = io_uring_register_files_sparse(&ring, FIXED_SLOTS)) < 0)
    die("io_uring_register_files_sparse (Linux >= 5.19)", -err);
}

static int listen_loopback(int port) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket", errno);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, (struct sockaddr*)&addr, sizeof addr) != 0) die("bind", errno);
  if (listen(lfd, SOMAXCONN) != 0) die("listen", errno);
  socklen_t len = sizeof addr;
  if (getsockname(lfd, (struct sockaddr*)&addr, &len) != 0) die("getsockname", errno);
  printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  fflush(stdout);
  return lfd;
}

int main(int argc, char** argv) {
  const int port = echo_args(argc, argv, "uring_echo", "--fixed-files", &fixed_files);
  signal(SIGPIPE, SIG_IGN);
  setup_ring(); /* before listening: an unusable io_uring fails before the readiness line */
  const int lfd = listen_loopback(port);
  struct io_uring_sqe* sqe = sqe_get();
  io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
  tag(sqe, NULL, OP_ACCEPT);

  for (;;) {
    int err = io_uring_submit_and_wait(&ring, 1);
    if (err < 0 && err != -EINTR) die("io_uring_submit_and_wait", -err);
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      uint64_t data = io_uring_cqe_get_data64(cqe);
      struct conn* c = (struct conn*)(uintptr_t)(data & ~(uint64_t)3);
      switch ((enum op)(data & 3)) {
        case OP_ACCEPT: on_accept(lfd, cqe); break;
        case OP_RECV: on_recv(c, cqe); break;
        case OP_SEND: on_send(c, cqe->res); break;
      }
      ++seen;
    }
    io_uring_cq_advance(&ring, seen);
  }
}
