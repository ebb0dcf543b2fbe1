/* The spec's Appendix A program (examples/appendix-a) run from C: a host executor answers each
 * tool from another thread with the example's fixture data, and the report is checked. */
#include <pthread.h>
#include <stdatomic.h>

#include "support.h"

static char *read_example(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/appendix-a/%s", RUNLET_EXAMPLES_DIR, name);
  FILE *file = fopen(path, "rb");
  CHECK(file != NULL);
  CHECK(fseek(file, 0, SEEK_END) == 0);
  long size = ftell(file);
  CHECK(size >= 0 && fseek(file, 0, SEEK_SET) == 0);
  char *text = malloc((size_t)size + 1);
  CHECK(text != NULL && fread(text, 1, (size_t)size, file) == (size_t)size);
  text[size] = '\0';
  fclose(file);
  return text;
}

typedef struct {
  const char *tool;
  const char *result;
  atomic_int calls;
} answer;

static answer answers[] = {
    {"crm.customer",
     "{\"id\": \"c-42\", \"name\": \"Ada Lovelace\", \"email\": \"ada@example.com\", \"secondary_email\": null,"
     " \"tier\": \"pro\", \"created_at\": \"2024-03-01T09:30:00Z\"}",
     0},
    {"billing.limits",
     "{\"customer_id\": \"c-42\", \"currency\": \"EUR\", \"credit_limit\": 5000, \"max_order_total\": 1500,"
     " \"daily_order_cap\": 20}",
     0},
    {"support.tickets",
     "[{\"id\": \"t-7\", \"subject\": \"Refund for a damaged parcel\", \"status\": \"open\", \"priority\": \"high\","
     " \"opened_at\": \"2026-11-20T14:02:00Z\"}]",
     0},
    {"shop.orders",
     "[{\"id\": \"o-1\", \"status\": \"completed\", \"total\": 120.5, \"currency\": \"EUR\", \"placed_at\":"
     " \"2026-10-02T10:00:00Z\", \"lines\": [{\"sku\": \"book-17\", \"quantity\": 1, \"unit_price\": 120.5}]},"
     " {\"id\": \"o-2\", \"status\": \"completed\", \"total\": 980, \"currency\": \"EUR\", \"placed_at\":"
     " \"2026-11-18T16:45:00Z\", \"lines\": [{\"sku\": \"lamp-3\", \"quantity\": 2, \"unit_price\": 490}]},"
     " {\"id\": \"o-3\", \"status\": \"pending\", \"total\": 45, \"currency\": \"EUR\", \"placed_at\":"
     " \"2026-11-28T08:15:00Z\", \"lines\": [{\"sku\": \"pen-1\", \"quantity\": 9, \"unit_price\": 5}]}]",
     0},
    {"fraud.score", "0.12", 0},
    {"ai.summarize", "\"Ada (pro) has 3 recent orders, none risky, and one open high-priority refund ticket.\"", 0},
};

static void *answer_call(void *token) {
  runlet_tool_call *call = token;
  runlet_str name = runlet_tool_call_name(call);
  for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
    if (str_is(name, answers[i].tool)) {
      atomic_fetch_add(&answers[i].calls, 1);
      sleep_ms(1);
      CHECK_OK(runlet_tool_call_complete(call, str_of(answers[i].result)));
      return NULL;
    }
  }
  runlet_tool_call_fail(call, runlet_error_new_tool(RUNLET_STR("UNKNOWN_TOOL"), name, false, -1, RUNLET_STR("")));
  return NULL;
}

static void invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, answer_call, call) == 0);
  CHECK(pthread_detach(thread) == 0);
}

int main(void) {
  char *source = read_example("main.run");
  char *registry = read_example("registry.json");
  char *inputs = read_example("inputs.json");
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = invoke;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(registry);
  options.executor = &executor;
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = NULL;
  CHECK_OK(runlet_program_compile(runtime, str_of(source), str_of(""), &program));
  runlet_run *run = start(runtime, program, inputs, 0);
  char *report = result_of(run);
  CHECK(strcmp(report, "\"Ada (pro) has 3 recent orders, none risky, and one open high-priority refund ticket.\"") == 0);
  int expected_calls[] = {1, 1, 1, 1, 3, 1};
  for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
    CHECK(atomic_load(&answers[i].calls) == expected_calls[i]);
  }
  free(report);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  free(source), free(registry), free(inputs);
  puts("appendix_a: ok");
  return 0;
}
