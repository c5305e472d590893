// run_with_deadline: runs a call that may block forever (a store request to a frozen master: c10d's
// TCPStore has no receive timeout) on a detached thread and gives up waiting after `limit`. The abandoned
// thread keeps only shared state alive; callers treat a miss as "the other side does not answer" and
// are about to exit.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

namespace slipway::dist {

// nullopt: no answer within `limit`. An exception thrown by `call` is rethrown here.
template <typename T>
std::optional<T> run_with_deadline(std::function<T()> call, std::chrono::milliseconds limit) {
    auto promise = std::make_shared<std::promise<T>>();
    std::future<T> answer = promise->get_future();
    std::thread([promise, call = std::move(call)] {
        try {
            promise->set_value(call());
        } catch (...) {
            promise->set_exception(std::current_exception());
        }
    }).detach();
    if (answer.wait_for(limit) != std::future_status::ready) return std::nullopt;
    return answer.get();
}

}  // namespace slipway::dist
