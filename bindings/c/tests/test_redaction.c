/* Redaction at the boundary (spec §6.2): event payloads are the public event JSON, and a tool
 * output labelled secret is redacted under the default view policy and shown only to a view
 * cleared for secrets. */
#include "support.h"

#define SECRET "s3cr3t-token-7f2a"

static const char *const VAULT_REGISTRY =
    "{\"tools\": [{\"name\": \"vault.read\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"string\"}}],"
    " \"outputSchema\": {\"type\": \"string\", \"x-runlet-sensitivity\": \"secret\"}, \"execution\": \"pure\"}]}";

/* Runs `return vault.read(SECRET)` under `view`; returns whether any event payload contained the
 * secret, and checks every payload is the public JSON object of its event. */
static int secret_seen_under(runlet_view_policy view) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(VAULT_REGISTRY);
  options.executor = &executor;
  options.view = view;
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, "return vault.read(\"" SECRET "\")\n");
  runlet_run *run = start(runtime, program, "", 1);
  int seen = 0, completed = 0;
  for (;;) {
    runlet_event_owned *owned = NULL;
    CHECK_OK(runlet_run_next_event(run, -1, &owned));
    if (owned == NULL) break;
    const runlet_event *event = runlet_event_owned_get(owned);
    CHECK(str_contains(event->payload_json, "\"seq\":"));
    CHECK(str_contains(event->payload_json, "\"kind\":\""));
    if (str_is(event->kind_name, "CallCompleted")) {
      completed = 1;
      CHECK(str_contains(event->payload_json, "\"tool\":\"vault.read\""));
    }
    seen |= str_contains(event->payload_json, SECRET);
    runlet_event_owned_free(owned);
  }
  CHECK(completed);
  free(result_of(run));
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  return seen;
}

static void the_default_view_redacts_secret_outputs(void) {
  runlet_view_policy view = {0};
  CHECK(!secret_seen_under(view));
}

static void a_view_cleared_for_secrets_sees_them(void) {
  runlet_view_policy view = {RUNLET_SENSITIVITY_SECRET, RUNLET_SENSITIVITY_SECRET, 0};
  CHECK(secret_seen_under(view));
}

static void unknown_labels_are_refused(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(VAULT_REGISTRY);
  options.executor = &executor;
  options.view.values = 7;
  runlet_runtime *runtime = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(runtime == NULL);
}

int main(void) {
  the_default_view_redacts_secret_outputs();
  a_view_cleared_for_secrets_sees_them();
  unknown_labels_are_refused();
  puts("redaction: ok");
  return 0;
}
