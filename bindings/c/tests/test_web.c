/* The graph page from C (runlet_page_server_*): a runtime's page server lists the run it
 * started and serves its page and its snapshot over HTTP on loopback; an address in use and one
 * that is no address are refused, naming it; a freed server no longer accepts connections. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support.h"

/* The port of `url` (`http://127.0.0.1:PORT`). */
static int port_of(runlet_str url) {
  char *text = str_dup(url);
  char *colon = strrchr(text, ':');
  CHECK(colon != NULL);
  int port = atoi(colon + 1);
  free(text);
  CHECK(port > 0);
  return port;
}

/* A connected socket to 127.0.0.1:`port`, or -1 when nothing accepts there. */
static int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(fd >= 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The whole response (status line, headers, body) to `GET path`; malloc'ed. */
static char *get(int port, const char *path) {
  int fd = connect_to(port);
  CHECK(fd >= 0);
  char request[512];
  int n = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
  CHECK(write(fd, request, (size_t)n) == n);
  size_t cap = 1 << 16, len = 0;
  char *response = malloc(cap + 1);
  for (;;) {
    if (len == cap) response = realloc(response, (cap *= 2) + 1);
    ssize_t got = read(fd, response + len, cap - len);
    CHECK(got >= 0);
    if (got == 0) break;
    len += (size_t)got;
  }
  close(fd);
  response[len] = '\0';
  return response;
}

int main(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);

  runlet_page_server *server = NULL;
  CHECK_OK(runlet_page_server_start(runtime, str_of("127.0.0.1:0"), &server));
  runlet_str url = runlet_page_server_url(server);
  CHECK(str_contains(url, "http://127.0.0.1:"));
  int port = port_of(url);

  /* A run started after the server is shown live, and listed from the journal. */
  runlet_program *program = compile(runtime, "first = echo.value(20)\nreturn [first, echo.value(22)]\n");
  runlet_run *run = start(runtime, program, "", 0);
  free(result_of(run));
  char *run_id = str_dup(runlet_run_id(run));

  char *runs = get(port, "/api/runs");
  CHECK(strstr(runs, "HTTP/1.1 200") == runs);
  CHECK(strstr(runs, run_id) != NULL);
  free(runs);

  char path[256];
  snprintf(path, sizeof path, "/api/runs/%s", run_id);
  char *snapshot = get(port, path);
  CHECK(strstr(snapshot, "HTTP/1.1 200") == snapshot);
  CHECK(strstr(snapshot, "echo.value") != NULL); /* the source and the call node */
  free(snapshot);

  snprintf(path, sizeof path, "/runs/%s", run_id);
  char *page = get(port, path);
  CHECK(strstr(page, "HTTP/1.1 200") == page);
  CHECK(strstr(page, "text/html") != NULL);
  free(page);

  char *unknown = get(port, "/api/runs/no-such-run");
  CHECK(strstr(unknown, "HTTP/1.1 404") == unknown);
  free(unknown);

  /* Refusals name the address; the out-pointer stays NULL. */
  char taken[64];
  snprintf(taken, sizeof taken, "127.0.0.1:%d", port);
  runlet_page_server *second = (runlet_page_server *)&second;
  runlet_error *err = runlet_page_server_start(runtime, str_of(taken), &second);
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(str_contains(runlet_error_message(err), taken));
  runlet_error_free(err);
  CHECK(second == NULL);
  CHECK_ERR(runlet_page_server_start(runtime, str_of("not an address"), &second), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_page_server_start(NULL, str_of(""), &second), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(runlet_page_server_url(NULL).len == 0);

  /* Freed: the thread is joined and the port closed before the call returns. */
  runlet_page_server_free(server);
  CHECK(connect_to(port) < 0);
  runlet_page_server_free(NULL);

  free(run_id);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  puts("web: ok");
  return 0;
}
