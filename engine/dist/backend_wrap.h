// The one place for c10d calls that differ between LibTorch versions. 2.x keeps collectives in
// c10d::Backend objects behind a c10d::ProcessGroup (1.x process groups are the backends themselves; the
// ProcessGroup constructor lost its Options argument in 2.6). 2.4+ asks TCPStore for its libuv server by
// default, which builds without libuv (Debian's 2.6) refuse. 2.3+ can take a listening socket the caller
// bound (masterListenFd): only there does the store listen on the master's address alone. 2.2+ gives
// communication failures their own exception types.
#pragma once

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <string>

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace slipway::dist {

// Switches `options` to TCPStore's classic server when it asks for libuv; false when it did not (1.x and
// 2.0-2.1 have only the classic one). libuv's availability is not exported, so callers try libuv first
// (NGC's torch has it) and come here when the store refuses it.
inline bool use_classic_store(c10d::TCPStoreOptions& options) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
    if (!options.useLibUV) return false;
    options.useLibUV = false;
    return true;
#else
    (void)options;
    return false;
#endif
}

// Makes the server listen on `host`'s address only, on options.port (0: a free one, then written back to
// options.port), through a socket bound here. False where TCPStore cannot take one (before 2.3), or where the
// name resolves here to a loopback address only (Debian maps a host's own name to 127.0.1.1, which the
// other nodes cannot reach): the server then listens on every interface. The socket is the server's from
// here on (never closed by us).
inline bool listen_on_host_only(c10d::TCPStoreOptions& options, const std::string& host,
                                bool host_is_loopback) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const std::string port = std::to_string(options.port);
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return false;
    int fd = -1;
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
        const bool loopback =
            a->ai_family == AF_INET6
                ? IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr)
                : (ntohl(reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr.s_addr) >> 24) == 127;
        if (loopback && !host_is_loopback) continue;
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        const int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        sockaddr_storage bound{};
        socklen_t length = sizeof(bound);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 2048) != 0 ||
            getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
            close(fd);
            fd = -1;
            continue;
        }
        options.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                         : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
    freeaddrinfo(found);
    if (fd < 0) return false;
    options.masterListenFd = fd;
    return true;
#else
    (void)options;
    (void)host;
    (void)host_is_loopback;
    return false;
#endif
}

// True for the exceptions LibTorch 2.2+ throws when communication fails (c10::DistError: DistBackendError
// from Gloo/NCCL work, DistStoreError, DistNetworkError); older versions throw plain errors there, which
// is_collective_failure() tells apart by their own types.
inline bool is_torch_dist_error(const std::exception& e) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
    return dynamic_cast<const c10::DistError*>(&e) != nullptr;
#else
    (void)e;
    return false;
#endif
}

// A client's options for the server `server` describes (the same port, timeout and server kind).
inline c10d::TCPStoreOptions client_options(const c10d::TCPStoreOptions& server) {
    c10d::TCPStoreOptions client = server;
    client.isServer = false;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    client.masterListenFd = std::nullopt;
#endif
    return client;
}

}  // namespace slipway::dist

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace slipway::dist {

inline c10::intrusive_ptr<c10d::ProcessGroup> wrap_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                           int rank, int size, const std::string& name,
                                                           std::chrono::milliseconds timeout,
                                                           c10d::ProcessGroup::BackendType type,
                                                           c10::DeviceType device,
                                                           const c10::intrusive_ptr<c10d::Backend>& backend) {
#if TORCH_VERSION_MINOR >= 6
    (void)name;
    (void)timeout;
    auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
#else
    auto group = c10::make_intrusive<c10d::ProcessGroup>(
        store, rank, size, c10::make_intrusive<c10d::ProcessGroup::Options>(name, timeout));
#endif
    group->setDefaultBackend(type);
    group->setBackend(device, type, backend);
    return group;
}

}  // namespace slipway::dist
#endif
