// Status and Result<T>: how errors cross library boundaries in Slipway (no exceptions, no exit()).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace slipway {

// What kind of failure, for callers that react differently (a log follower waits for a file that is
// NotFound, reconnects when the connection is Unavailable). Most errors need no code: kError.
enum class StatusCode { kOk, kError, kNotFound, kTimeout, kUnavailable, kAuthFailed, kHostKeyRejected };

// Success, or a failure carrying a message a person can act on (it names the file, line or field).
class Status {
public:
    static Status Ok() { return Status(); }
    static Status Error(std::string message) { return Status(StatusCode::kError, std::move(message)); }
    static Status Error(StatusCode code, std::string message) { return Status(code, std::move(message)); }

    bool ok() const { return !message_.has_value(); }
    explicit operator bool() const { return ok(); }
    StatusCode code() const { return code_; }
    const std::string& message() const {
        static const std::string kEmpty;
        return message_ ? *message_ : kEmpty;
    }

private:
    Status() = default;
    Status(StatusCode code, std::string message)
        : code_(code == StatusCode::kOk ? StatusCode::kError : code), message_(std::move(message)) {}
    StatusCode code_ = StatusCode::kOk;
    std::optional<std::string> message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
public:
    Result(T value) : state_(std::move(value)) {}         // NOLINT: implicit on purpose, like absl::StatusOr
    Result(Status status) : state_(std::move(status)) {}  // NOLINT

    static Result Error(std::string message) { return Result(Status::Error(std::move(message))); }
    static Result Error(StatusCode code, std::string message) { return Result(Status::Error(code, std::move(message))); }

    bool ok() const { return std::holds_alternative<T>(state_); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(state_); }
    T& value() & { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }
    StatusCode code() const { return ok() ? StatusCode::kOk : std::get<Status>(state_).code(); }
    const std::string& error() const {
        static const std::string kEmpty;
        return ok() ? kEmpty : std::get<Status>(state_).message();
    }

private:
    std::variant<T, Status> state_;
};

}  // namespace slipway
