/* The echo servers' option, --port P (0 picks a free port), parsed the same way by
 * the C and C++ peers, plus at most one on/off flag of a server's own (uring_echo's
 * --fixed-files). Exits with a usage line on anything else. */
#ifndef CORIO_BENCH_ECHO_ARGS_H
#define CORIO_BENCH_ECHO_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* flag: the server's own flag (NULL: none); *flag_on is set to whether it was given. */
static inline int echo_args(int argc, char** argv, const char* program, const char* flag,
                            int* flag_on) {
  int port = 0;
  if (flag) *flag_on = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      port = atoi(argv[++i]);
    } else if (flag && strcmp(argv[i], flag) == 0) {
      *flag_on = 1;
    } else {
      fprintf(stderr, "usage: %s [--port P]%s%s%s\n", program, flag ? " [" : "",
              flag ? flag : "", flag ? "]" : "");
      exit(2);
    }
  }
  return port;
}

static inline int echo_port_arg(int argc, char** argv, const char* program) {
  return echo_args(argc, argv, program, NULL, NULL);
}

#endif
