// The foreign store client of store_intruder.h, on c10d's TCPStore as any cluster user could run it.
#include "store_intruder.h"

#include <chrono>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "dist/backend_wrap.h"

namespace slipway::testing_support {

int64_t intrude_store(const std::string& host, int port, const std::atomic<bool>& stop) {
    const std::vector<std::string> keys = {
        "slipway/heartbeat/0",
        "slipway/heartbeat/1",
        "slipway/progress/0",
        "slipway/progress/1",
        "slipway/gave_up/0",
        "slipway/gave_up/1",
        "slipway/gloo/0",
        "slipway/gloo/1",
        "slipway/phase/preparing the token cache",
        "hello",
        "slipway/00000000000000000000000000000000/hello",
    };
    const std::string lie = "error: the intruder says so";
    const std::vector<uint8_t> garbage(lie.begin(), lie.end());
    int64_t accepted = 0;
    while (!stop) {
        try {
            c10d::TCPStoreOptions options;
            options.port = static_cast<uint16_t>(port);
            options.isServer = false;
            options.waitWorkers = false;
            options.timeout = std::chrono::milliseconds(2000);
            (void)dist::use_classic_store(options);  // 2.4+ clients refuse libuv where it is not built in
            c10d::TCPStore store(host, options);
            while (!stop) {
                store.add("init/", 1);  // TCPStore's worker count
                for (const std::string& key : keys) {
                    store.set(key, garbage);
                    store.deleteKey(key);
                    store.set(key, garbage);
                    accepted += 3;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        } catch (const std::exception&) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));  // not up yet, or the job ended
        }
    }
    return accepted;
}

}  // namespace slipway::testing_support
