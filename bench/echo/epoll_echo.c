/* Echo server on raw epoll, in C: the floor the others are measured against.
 *
 * Pure byte echo (bench/echo/README.md): read what is there, write it back. Level-
 * triggered: on EPOLLIN one read of up to 64 KiB and one write of the same bytes, two
 * syscalls per message in the common case. Only when the write is partial does the
 * connection switch to EPOLLOUT (and stop reading) until the rest is out; epoll_ctl is
 * called on that path only. TCP_NODELAY on every connection, as asyncio does.
 *
 * Usage: epoll_echo [--port P]   (127.0.0.1; P = 0 picks a free port)
 * Prints "listening on 127.0.0.1:PORT" as its first line (as `corio echo-server`
 * does), then serves until killed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo_args.h"

enum { BUF_SIZE = 65536, MAX_EVENTS = 256 };

struct conn {
  int fd;
  size_t off, len; /* bytes buf[off, len) still to write back */
  unsigned char buf[BUF_SIZE];
};

static int ep;

static void die(const char* what) {
  fprintf(stderr, "epoll_echo: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void set_interest(struct conn* c, unsigned events) {
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0) die("epoll_ctl");
}

static void drop(struct conn* c) {
  close(c->fd); /* also removes it from the epoll set */
  free(c);
}

/* Writes buf[off, len). Returns 0 when all is out or the socket is full, -1 on error. */
static int flush(struct conn* c) {
  while (c->off < c->len) {
    ssize_t n = write(c->fd, c->buf + c->off, c->len - c->off);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    c->off += (size_t)n;
  }
  return 0;
}

static void on_readable(struct conn* c) {
  ssize_t n = read(c->fd, c->buf, BUF_SIZE);
  if (n <= 0) {
    if (n < 0 && errno == EAGAIN) return;
    drop(c); /* EOF or error */
    return;
  }
  c->off = 0;
  c->len = (size_t)n;
  if (flush(c) != 0) {
    drop(c);
    return;
  }
  if (c->off < c->len) set_interest(c, EPOLLOUT);
}

static void on_writable(struct conn* c) {
  if (flush(c) != 0) {
    drop(c);
    return;
  }
  if (c->off == c->len) set_interest(c, EPOLLIN);
}

static void on_accept(int lfd) {
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == ECONNABORTED || errno == EINTR) return;
      die("accept4");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct conn* c = malloc(sizeof *c);
    if (!c) die("malloc");
    c->fd = fd;
    c->off = c->len = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  }
}

int main(int argc, char** argv) {
  const int port = echo_port_arg(argc, argv, "epoll_echo");
  signal(SIGPIPE, SIG_IGN);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, (struct sockaddr*)&addr, sizeof addr) != 0) die("bind");
  if (listen(lfd, SOMAXCONN) != 0) die("listen");
  socklen_t len = sizeof addr;
  if (getsockname(lfd, (struct sockaddr*)&addr, &len) != 0) die("getsockname");
  printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  fflush(stdout);

  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL}; /* NULL: the listener */
  if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) != 0) die("epoll_ctl");

  struct epoll_event events[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(ep, events, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
      struct conn* c = events[i].data.ptr;
      unsigned ev = events[i].events;
      if (c == NULL) {
        on_accept(lfd);
      } else if (ev & EPOLLOUT) {
        on_writable(c);
      } else if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        on_readable(c); /* an error or hang-up shows as a failing read */
      }
    }
  }
}
