/* What the header documents as misuse does when a host does it anyway: completing a tool call
 * twice and freeing a handle twice are undefined behaviour (the token or handle is gone after the
 * first). Built only with AddressSanitizer, which stops the process at the second use: each case
 * runs in a child process, and the test checks the child was stopped with a sanitizer report. */
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static void complete_twice(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("1")));
  runlet_tool_call_complete(call, RUNLET_STR("2")); /* misuse: the token was consumed */
}

static void double_completion(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = complete_twice;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  runlet_run_wait(run, 10000);
}

static void double_free(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  runlet_run_free(run);
  runlet_run_free(run); /* misuse: the handle was freed */
}

/* Runs `misuse` in a child and returns its stderr (malloc'ed), checking it did not end well. */
static char *stopped(void (*misuse)(void)) {
  int pipefd[2];
  CHECK(pipe(pipefd) == 0);
  fflush(NULL);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    close(pipefd[0]);
    dup2(pipefd[1], STDERR_FILENO);
    misuse();
    _exit(0); /* the misuse went unnoticed */
  }
  close(pipefd[1]);
  size_t cap = 1 << 16, got = 0;
  char *text = malloc(cap);
  CHECK(text != NULL);
  ssize_t n;
  while ((n = read(pipefd[0], text + got, cap - 1 - got)) > 0) got += (size_t)n;
  close(pipefd[0]);
  text[got] = '\0';
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return text;
}

/* Checks that the child's report is AddressSanitizer's and prints its `ERROR:` line. */
static void reported(const char *what, char *report) {
  char *error = strstr(report, "ERROR: AddressSanitizer");
  CHECK(error != NULL);
  char *end = strchr(error, '\n');
  if (end) *end = '\0';
  printf("%s: %s\n", what, error);
  free(report);
}

int main(void) {
  reported("double completion", stopped(double_completion));
  reported("double free", stopped(double_free));
  puts("misuse: ok");
  return 0;
}
