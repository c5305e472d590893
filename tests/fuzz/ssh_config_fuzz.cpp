// Fuzz harness: ~/.ssh/config as users write and copy it (Host blocks, patterns, quoting, ProxyJump),
// then a lookup and the resolved connection target for an alias the config names.
#include <string>

#include "fuzz_common.h"
#include "remote/ssh/ssh_config.h"

using namespace slipway;
using namespace slipway::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(fuzz::as_text(data, size));
    Result<SshConfig> config = parse_ssh_config(text, "fuzz/ssh_config");
    if (!config.ok()) {
        FUZZ_CHECK(fuzz::names(config.error(), "fuzz/ssh_config"), config.error());
        return 0;
    }
    for (const SshConfigBlock& block : config->blocks) {
        for (const std::string& pattern : block.patterns) {
            (void)config->lookup(pattern);
            ConnectOptions options;
            options.host = pattern;
            (void)resolve_ssh_target(options, *config, "/home/u", "u");
        }
    }
    (void)parse_proxy_jump(text);
    return 0;
}
