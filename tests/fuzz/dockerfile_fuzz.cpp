// Fuzz harness: Dockerfiles users paste or pull (continuations, quoting, exec form) through the reader
// and every lint rule; findings must point at a line of the file.
#include <algorithm>
#include <string>

#include "fuzz_common.h"
#include "remote/container/dockerfile_lint.h"
#include "remote/container/dockerfile_reader.h"

using namespace slipway::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(slipway::fuzz::as_text(data, size));
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const dockerfile::Instruction& instruction : dockerfile::read_instructions(text)) {
        FUZZ_CHECK(instruction.line >= 1 && instruction.line <= lines, std::to_string(instruction.line));
        for (size_t i = 0; i < instruction.args.size(); i += 17)
            FUZZ_CHECK(instruction.line_of(i) >= instruction.line && instruction.line_of(i) <= lines,
                       "line_of");
        (void)dockerfile::run_commands(instruction.args);
    }
    for (const LintFinding& finding : lint_dockerfile(text))
        FUZZ_CHECK(finding.line >= 1 && finding.line <= lines,
                   finding.rule + " at " + std::to_string(finding.line));
    return 0;
}
