/* OTLP export from a librunlet built with the `otlp` feature: a run started under a host's
 * traceparent is exported over OTLP/HTTP (JSON) to a receiver this test runs on 127.0.0.1, in the
 * host's trace, and the traceparent the C tool saw is the exported dispatch span's. */
#include <arpa/inet.h>
#include <stddef.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support.h"

#define TRACE_ID "4bf92f3577b34da6a3ce929d0e0e4736"

/* --- a loopback OTLP/HTTP receiver ---------------------------------------------------------- */

static pthread_mutex_t received_lock = PTHREAD_MUTEX_INITIALIZER;
static char *received; /* every request body, concatenated */
static size_t received_len;

/* Appends what `fd` has next to `*buf` (growing it); 0 when the connection closed. */
static int recv_more(int fd, char **buf, size_t *cap, size_t *len) {
  if (*len + 1 >= *cap) *buf = realloc(*buf, *cap *= 2);
  ssize_t n = recv(fd, *buf + *len, *cap - *len - 1, 0);
  if (n <= 0) return 0;
  *len += (size_t)n;
  (*buf)[*len] = '\0';
  return 1;
}

/* Reads one HTTP/1.1 request of `fd` into its body; -1 when the connection closed. */
static long read_request(int fd, char **body) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  buf[0] = '\0';
  char *end;
  while (!(end = strstr(buf, "\r\n\r\n"))) {
    if (!recv_more(fd, &buf, &cap, &len)) {
      free(buf);
      return -1;
    }
  }
  size_t head = (size_t)(end - buf) + 4;
  long content_length = 0;
  for (char *line = buf; line < end; line = strstr(line, "\r\n") + 2) {
    if (strncasecmp(line, "content-length:", 15) == 0) content_length = strtol(line + 15, NULL, 10);
  }
  while (len < head + (size_t)content_length) {
    if (!recv_more(fd, &buf, &cap, &len)) {
      free(buf);
      return -1;
    }
  }
  *body = malloc((size_t)content_length + 1);
  memcpy(*body, buf + head, (size_t)content_length);
  (*body)[content_length] = '\0';
  free(buf);
  return content_length;
}

static void *serve_connection(void *arg) {
  int fd = (int)(intptr_t)arg;
  char *body;
  long len;
  while ((len = read_request(fd, &body)) >= 0) {
    pthread_mutex_lock(&received_lock);
    received = realloc(received, received_len + (size_t)len + 1);
    memcpy(received + received_len, body, (size_t)len);
    received_len += (size_t)len;
    received[received_len] = '\0';
    pthread_mutex_unlock(&received_lock);
    free(body);
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    if (send(fd, ok, strlen(ok), 0) < 0) break;
  }
  close(fd);
  return NULL;
}

static void *accept_loop(void *arg) {
  int listener = (int)(intptr_t)arg;
  for (;;) {
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) return NULL;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve_connection, (void *)(intptr_t)fd) == 0);
    pthread_detach(thread);
  }
}

/* Starts the receiver on a free loopback port and returns the port. */
static int start_receiver(void) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(listener >= 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(listener, (struct sockaddr *)&address, sizeof address) == 0);
  CHECK(listen(listener, 16) == 0);
  socklen_t size = sizeof address;
  CHECK(getsockname(listener, (struct sockaddr *)&address, &size) == 0);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, accept_loop, (void *)(intptr_t)listener) == 0);
  pthread_detach(thread);
  return ntohs(address.sin_port);
}

static int received_contains(const char *needle) {
  pthread_mutex_lock(&received_lock);
  int found = received && strstr(received, needle) != NULL;
  pthread_mutex_unlock(&received_lock);
  return found;
}

/* Whether an exported JSON object has `"key": "value"` (with or without the space the exporter
 * pretty-prints). */
static int received_field(const char *key, const char *value) {
  char compact[256], spaced[256];
  snprintf(compact, sizeof compact, "\"%s\":\"%s\"", key, value);
  snprintf(spaced, sizeof spaced, "\"%s\": \"%s\"", key, value);
  return received_contains(compact) || received_contains(spaced);
}

/* --- the traced run ------------------------------------------------------------------------- */

static char *seen_traceparent;

static void tracing_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  seen_traceparent = str_dup(runlet_tool_call_traceparent(call));
  CHECK(runlet_tool_call_tracestate(call).len == 0);
  CHECK(runlet_tool_call_traceparent(NULL).len == 0);
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("7")));
}

int main(void) {
  char endpoint[64];
  snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", start_receiver());
  CHECK(setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, 1) == 0);
  CHECK(setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1) == 0);
  CHECK(setenv("OTEL_SERVICE_NAME", "runlet-c-otlp-test", 1) == 0);

  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = tracing_invoke;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");

  runlet_run_options options = RUNLET_RUN_OPTIONS_INIT;
  runlet_run *run = NULL;
  options.traceparent = RUNLET_STR(TRACE_ID "-00f067aa0ba902b7");
  CHECK_ERR(runlet_run_start(runtime, program, RUNLET_STR(""), &options, &run), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(run == NULL);
  options.traceparent = RUNLET_STR("00-" TRACE_ID "-00f067aa0ba902b7-01");
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &options, &run));
  char *result = result_of(run);
  CHECK(strcmp(result, "7") == 0);
  free(result);
  runlet_run_free(run);
  free(seen_traceparent);

  /* Options of the first version, before the trace context, still start a run: its own trace. */
  runlet_run_options first = RUNLET_RUN_OPTIONS_INIT;
  first.struct_size = offsetof(runlet_run_options, traceparent);
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &first, &run));
  result = result_of(run);
  CHECK(strcmp(result, "7") == 0);
  free(result);
  runlet_run_free(run);
  CHECK(seen_traceparent && strlen(seen_traceparent) == 55 && strncmp(seen_traceparent, "00-" TRACE_ID, 35) != 0);
  free(seen_traceparent);

  options.traceparent = RUNLET_STR("00-" TRACE_ID "-00f067aa0ba902b7-01");
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &options, &run));
  result = result_of(run);
  free(result);
  runlet_run_free(run);
  runlet_program_free(program);
  /* Freeing the runtime sends what is pending. */
  runlet_runtime_free(runtime);

  /* 00-<trace id>-<span id>-01: the tool's span is the run's dispatch span, in the host's trace. */
  CHECK(seen_traceparent && strlen(seen_traceparent) == 55);
  CHECK(strncmp(seen_traceparent, "00-" TRACE_ID "-", 36) == 0);
  char span[17];
  snprintf(span, sizeof span, "%.16s", seen_traceparent + 36);
  CHECK(received_field("traceId", TRACE_ID));
  CHECK(received_field("spanId", span));
  CHECK(received_field("name", "runlet.dispatch"));
  CHECK(received_field("name", "runlet.run"));
  CHECK(received_field("stringValue", "runlet-c-otlp-test"));
  CHECK(received_field("name", "runlet.tool.calls"));
  free(seen_traceparent);
  pthread_mutex_lock(&received_lock);
  free(received);
  received = NULL;
  pthread_mutex_unlock(&received_lock);
  printf("otlp: ok\n");
  return 0;
}
