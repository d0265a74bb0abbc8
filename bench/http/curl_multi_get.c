/* The http suite's libcurl client: N GETs of one URL, at most C in flight, on one
 * thread with the multi interface (bench/http/README.md, "Client").
 *
 * C easy handles are created once; each is re-added to the multi handle as soon as its
 * transfer is done, until N have been started. Connections live in the multi handle's
 * cache (CURLMOPT_MAXCONNECTS = C) and are reused by whichever handle comes next, which
 * is how an application keeps HTTP/1.1 keep-alive with libcurl; CURLMOPT_MAX_TOTAL_
 * CONNECTIONS = C caps the pool as aiohttp's TCPConnector(limit=C) does. Bodies are
 * counted and dropped. The clock runs from the first transfer added to the last done.
 *
 * Driven by curl_multi_perform + curl_multi_poll, the multi interface's plain loop.
 * The event way (curl_multi_socket_action on an own epoll, libcurl's ephiperfifo.c)
 * touches only the ready sockets instead of every transfer per wake-up, but with 100
 * transfers it measured no faster here (A/B against one server, interleaved runs), so
 * the simpler loop it is.
 *
 * Usage: curl_multi_get --url URL [--requests N] [--concurrency C]
 * Prints JSON lines: http_client_rps (req/s), http_client_errors (transfers that failed
 * or were not 200), http_client_connects (TCP connections opened: C when keep-alive works).
 * Exits 1 when there were errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

struct options {
  const char* url;
  long requests;
  long concurrency;
};

static struct options parse_args(int argc, char** argv) {
  struct options o = {NULL, 10000, 100};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--url") == 0) {
      o.url = argv[i + 1];
    } else if (strcmp(argv[i], "--requests") == 0) {
      o.requests = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--concurrency") == 0) {
      o.concurrency = atol(argv[i + 1]);
    } else {
      o.url = NULL;
      break;
    }
  }
  if (o.url == NULL || argc % 2 == 0 || o.requests < 1 || o.concurrency < 1) {
    fprintf(stderr, "usage: curl_multi_get --url URL [--requests N] [--concurrency C]\n");
    exit(2);
  }
  return o;
}

static size_t discard(char* data, size_t size, size_t nmemb, void* bytes) {
  (void)data;
  *(long*)bytes += (long)(size * nmemb);
  return size * nmemb;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One result line in the JSON shape bench/run reads from every participant. */
static void print_metric(const char* metric, double value, const char* unit) {
  printf("{\"impl\": \"curl\", \"metric\": \"%s\", \"value\": %.1f, \"unit\": \"%s\"}\n", metric,
         value, unit);
}

/* One finished transfer: 1 if it failed or was not a 200, else 0. */
static int failed(CURLMsg* msg, long* connects) {
  long status = 0, opened = 0;
  curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(msg->easy_handle, CURLINFO_NUM_CONNECTS, &opened);
  *connects += opened;
  if (msg->data.result != CURLE_OK) {
    fprintf(stderr, "curl_multi_get: %s\n", curl_easy_strerror(msg->data.result));
    return 1;
  }
  return status != 200;
}

int main(int argc, char** argv) {
  const struct options o = parse_args(argc, argv);
  const long slots = o.concurrency < o.requests ? o.concurrency : o.requests;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, slots);
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, slots);
  CURL** easy = calloc((size_t)slots, sizeof *easy);
  long bytes = 0, started = 0, done = 0, errors = 0, connects = 0;
  for (long i = 0; i < slots; ++i) {
    easy[i] = curl_easy_init();
    curl_easy_setopt(easy[i], CURLOPT_URL, o.url);
    curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &bytes);
  }
  const double start = now_s();
  for (; started < slots; ++started) curl_multi_add_handle(multi, easy[started]);
  while (done < o.requests) {
    int running = 0, queued = 0;
    curl_multi_perform(multi, &running);
    for (CURLMsg* msg; (msg = curl_multi_info_read(multi, &queued)) != NULL;) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* handle = msg->easy_handle;
      errors += failed(msg, &connects);
      ++done;
      curl_multi_remove_handle(multi, handle);
      if (started < o.requests) {
        curl_multi_add_handle(multi, handle);
        ++started;
      }
    }
    if (done < o.requests) curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  const double elapsed = now_s() - start;
  print_metric("http_client_rps", (double)o.requests / elapsed, "req/s");
  print_metric("http_client_errors", (double)errors, "count");
  print_metric("http_client_connects", (double)connects, "count");
  fprintf(stderr, "curl_multi_get: %ld GETs, %ld body bytes, %.3f s\n", o.requests, bytes, elapsed);
  for (long i = 0; i < slots; ++i) curl_easy_cleanup(easy[i]);
  free(easy);
  curl_multi_cleanup(multi);
  curl_global_cleanup();
  return errors == 0 ? 0 : 1;
}
