/* cmd_llm.c — `kopt llm check --llm BACKEND:MODEL`: does the endpoint answer? */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "llm/client.h"

static const char USAGE[] =
    "usage: kopt llm check --llm BACKEND:MODEL [--llm-config FILE]\n"
    "\n"
    "Send one tiny request to the LLM endpoint and report whether it answers, with the latency and\n"
    "tokens. BACKEND is openai (any OpenAI-compatible server: OPENAI_BASE_URL, OPENAI_API_KEY) or\n"
    "anthropic (ANTHROPIC_API_KEY). Keys are read from the environment and never printed.\n"
    "\n"
    "options:\n"
    "  --llm BACKEND:MODEL   the endpoint to check (required)\n"
    "  --llm-config FILE     LLM settings file (default ~/.config/kopt/llm.json if present)\n"
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 the endpoint answered, 2 bad command line or settings, 3 --llm-config FILE\n"
    "  missing, 13 it did not answer (unreachable, key refused, unknown model)\n";

int cmd_llm(int argc, char **argv) {
    static const struct option longopts[] = {{"llm", required_argument, 0, 'L'},
                                             {"llm-config", required_argument, 0, 'C'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *spec = NULL, *conf = NULL;
    int opt;
    kerr e = {0};
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'L': spec = optarg; break;
        case 'C': conf = optarg; break;
        case 'h': fputs(USAGE, stdout); return 0;
        default: fputs(USAGE, stderr); return KOPT_E_USAGE;
        }
    }
    if (optind != argc - 1 || strcmp(argv[optind], "check") || !spec) {
        fputs(USAGE, stderr);
        return KOPT_E_USAGE;
    }
    llm_config cfg;
    llm_client *c = NULL;
    if (llm_config_resolve(spec, conf, &cfg, &e) || llm_client_new(&cfg, &c, &e)) {
        llm_config_free(&cfg);
        return cli_fail("llm", &e, 0);
    }
    llm_config_free(&cfg);
    llm_reply r = {0};
    int rc = llm_check(c, &r, &e);
    if (rc) cli_fail("llm", &e, 0);
    else
        printf("%s at %s answered in %.2f s (%ld tokens in, %ld out)\n", llm_client_name(c), llm_client_base_url(c),
               r.latency_s, r.tokens_in, r.tokens_out);
    llm_reply_free(&r);
    llm_client_free(c);
    return rc;
}
