// The rendezvous secret, the store prefix derived from it, and the published port (rendezvous.h).
#include "dist/rendezvous.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "contract/file_system.h"
#include "data/hash.h"

namespace slipway::dist {
namespace {

// Distinct seeds keep the prefix and the file tag unrelated to each other. XXH64 is no cryptographic hash:
// the prefix only has to be unguessable, and whoever can watch the job's traffic sees the prefix anyway.
constexpr uint64_t kPrefixSeedA = 0x736c69707761792dull, kPrefixSeedB = 0x72647a762d6b6579ull,
                   kTagSeed = 0x706f72742d746167ull;

std::string port_tag(const std::string& secret, const std::string& scope, int port) {
    return data::hex64(data::xxh64(scope + "\n" + std::to_string(port), data::xxh64(secret, kTagSeed)));
}

}  // namespace

Result<std::string> new_rendezvous_secret() {
    unsigned char bytes[16];
    std::ifstream random("/dev/urandom", std::ios::binary);
    if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes)))
        return Status::Error("cannot read 16 bytes from /dev/urandom for the rendezvous secret");
    std::string hex;
    for (unsigned char b : bytes) {
        static const char digits[] = "0123456789abcdef";
        hex += digits[b >> 4];
        hex += digits[b & 15];
    }
    return hex;
}

std::string store_prefix(const std::string& secret) {
    return "slipway/" + data::hex64(data::xxh64(secret, kPrefixSeedA)) +
           data::hex64(data::xxh64(secret, kPrefixSeedB));
}

Status publish_port(const std::string& path, const std::string& secret, const std::string& scope, int port) {
    const std::string text = std::to_string(port) + " " + port_tag(secret, scope, port) + "\n";
    AtomicWriteOptions private_file;
    private_file.mode = 0600;
    if (Status s = write_file_atomically(path, text, private_file); !s.ok())
        return Status::Error("cannot publish the rendezvous port: " + s.message());
    return Status::Ok();
}

Result<int> wait_for_published_port(const std::string& path, const std::string& secret,
                                    const std::string& scope, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool seen_other = false;  // a file that another step or another secret wrote
    while (true) {
        std::ifstream in(path);
        int port = 0;
        std::string tag;
        if (in >> port >> tag) {
            if (port > 0 && port < 65536 && tag == port_tag(secret, scope, port)) return port;
            seen_other = true;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ostringstream why;
    why << "no rendezvous port from rank 0 in " << kPortFileVariable << "=" << path << " within "
        << timeout.count() / 1000 << " s: ";
    if (seen_other) {
        why << "the file holds a port published with another secret or by another job step (is "
            << kSecretVariable << " the same on every rank?)";
    } else {
        why << "rank 0 did not publish one (it has not started, failed, or the file is not on a filesystem "
               "every rank sees)";
    }
    return Status::Error(StatusCode::kUnavailable, why.str());
}

}  // namespace slipway::dist
