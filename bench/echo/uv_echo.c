/* Echo server on libuv 1.x: uv_read_start / uv_write, the shape of libuv's own
 * test/echo-server.c, with one change its users commonly make: try the write at once
 * (uv_try_write) and queue a uv_write only for what the socket did not take, so the
 * common case allocates nothing.
 *
 * Pure byte echo (bench/echo/README.md). Each connection owns a 64 KiB read buffer
 * (alloc_cb hands it out); what uv_try_write leaves is copied into a uv_write request
 * that frees itself in its callback. libuv keeps queued writes in order and makes
 * uv_try_write fail with UV_EAGAIN while any are queued, so bytes never reorder.
 * TCP_NODELAY on every connection, as asyncio does.
 *
 * Usage: uv_echo [--port P]   (127.0.0.1; P = 0 picks a free port)
 * Prints "listening on 127.0.0.1:PORT" as its first line (as `corio echo-server`
 * does), then serves until killed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "echo_args.h"

enum { BUF_SIZE = 65536 };

struct conn {
  uv_tcp_t tcp; /* first: a uv_handle_t* to it is a struct conn* */
  char buf[BUF_SIZE];
};

struct write_req {
  uv_write_t req;
  uv_buf_t buf;
  char data[]; /* the bytes uv_try_write did not take */
};

static uv_loop_t* loop;

static void check(int rc, const char* what) {
  if (rc < 0) {
    fprintf(stderr, "uv_echo: %s: %s\n", what, uv_strerror(rc));
    exit(1);
  }
}

static void on_close(uv_handle_t* h) { free(h); }

static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf) {
  (void)suggested;
  struct conn* c = (struct conn*)h;
  *buf = uv_buf_init(c->buf, BUF_SIZE);
}

static void on_written(uv_write_t* req, int status) {
  (void)status; /* on error the read side sees it too and closes */
  free(req);
}

static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0) { /* UV_EOF or an error */
    if (!uv_is_closing((uv_handle_t*)s)) uv_close((uv_handle_t*)s, on_close);
    return;
  }
  if (nread == 0) return; /* EAGAIN */
  uv_buf_t out = uv_buf_init(buf->base, (unsigned)nread);
  int n = uv_try_write(s, &out, 1);
  if (n == nread) return;
  if (n < 0 && n != UV_EAGAIN) {
    uv_close((uv_handle_t*)s, on_close);
    return;
  }
  size_t done = n < 0 ? 0 : (size_t)n, rest = (size_t)nread - done;
  struct write_req* w = malloc(sizeof *w + rest);
  if (!w) check(UV_ENOMEM, "malloc");
  memcpy(w->data, buf->base + done, rest);
  w->buf = uv_buf_init(w->data, (unsigned)rest);
  if (uv_write(&w->req, s, &w->buf, 1, on_written) < 0) {
    free(w);
    uv_close((uv_handle_t*)s, on_close);
  }
}

static void on_connection(uv_stream_t* server, int status) {
  check(status, "listen");
  struct conn* c = malloc(sizeof *c);
  if (!c) check(UV_ENOMEM, "malloc");
  check(uv_tcp_init(loop, &c->tcp), "uv_tcp_init");
  if (uv_accept(server, (uv_stream_t*)&c->tcp) != 0) {
    uv_close((uv_handle_t*)&c->tcp, on_close);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  check(uv_read_start((uv_stream_t*)&c->tcp, on_alloc, on_read), "uv_read_start");
}

int main(int argc, char** argv) {
  const int port = echo_port_arg(argc, argv, "uv_echo");
  signal(SIGPIPE, SIG_IGN);
  loop = uv_default_loop();
  uv_tcp_t server;
  struct sockaddr_in addr;
  check(uv_ip4_addr("127.0.0.1", port, &addr), "uv_ip4_addr");
  check(uv_tcp_init(loop, &server), "uv_tcp_init");
  check(uv_tcp_bind(&server, (const struct sockaddr*)&addr, 0), "bind");
  check(uv_listen((uv_stream_t*)&server, SOMAXCONN, on_connection), "listen");
  int len = sizeof addr;
  check(uv_tcp_getsockname(&server, (struct sockaddr*)&addr, &len), "getsockname");
  printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  fflush(stdout);
  return uv_run(loop, UV_RUN_DEFAULT);
}
