/* main.c — `kopt` entry point: dispatches git-style subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_cmd;

static const cli_cmd CMDS[] = {
    {"inspect", "compile a model, parse Inductor's output and profile every sub-kernel", cmd_inspect},
    {"optimize", "search faster Triton kernels for a model, verify them, re-stitch the winners", cmd_optimize},
    {"verify", "check replacement kernels through the four gates and re-stitch the winners", cmd_verify},
    {"lint", "check a candidate file against gate 1's static rules, on the CPU (no worker, no GPU)", cmd_lint},
    {"llm", "'kopt llm check': does the configured LLM endpoint answer?", cmd_llm},
    {"bench", "run optimize over a suite of problems (KernelBench layout), one lane per GPU, resumable", cmd_bench},
    {"store", "the memory of optimize: list runs, export one as JSON, merge other hosts' stores", cmd_store},
    {"parse", "parse an Inductor output module (no GPU): kernels, launches, round trip", cmd_parse},
    {"version", "the version, the supported torch/triton, the paths kopt uses (also --version)", cmd_version},
};

static void usage(FILE *f) {
    fputs("usage: kopt <command> [options]\n\n"
          "kernelopt finds faster replacements for the Triton kernels that torch.compile\n"
          "generates, verifies them, and re-stitches them into the compiled model.\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof CMDS / sizeof *CMDS; i++) fprintf(f, "  %-10s %s\n", CMDS[i].name, CMDS[i].summary);
    fputs("\n'kopt <command> --help' describes each command and lists its exit codes.\n"
          "exit codes: 0 ok, 1 internal error, 2 bad command line, 3 input file missing or not a file;\n"
          "  the others are the command's own (README.md, \"Exit codes\").\n",
          f);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return KOPT_E_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) return cmd_version(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof CMDS / sizeof *CMDS; i++)
        if (!strcmp(argv[1], CMDS[i].name)) return CMDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "kopt: '%s' is not a kopt command; see 'kopt --help'\n", argv[1]);
    return KOPT_E_USAGE;
}
