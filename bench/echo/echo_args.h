/* The echo servers' one option, --port P (0 picks a free port), parsed the
 * same way by the C and C++ peers. Exits with a usage line on anything else. */
#ifndef CORIO_BENCH_ECHO_ARGS_H
#define CORIO_BENCH_ECHO_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int echo_port_arg(int argc, char** argv, const char* program) {
  int port = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      port = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--port P]\n", program);
      exit(2);
    }
  }
  return port;
}

#endif
