// LibsshProcess: a command started on a LibsshSession's connection that streams while it runs (the
// RemoteProcess contract in session.h). Each call takes the session's lock for one short step.
#include <algorithm>
#include <thread>

#include "remote/ssh/libssh_session_impl.h"

namespace slipway::remote {

class LibsshProcess : public RemoteProcess {
public:
    LibsshProcess(std::shared_ptr<std::mutex> mutex, LibsshSession* session, ssh_channel channel,
                  std::string command)
        : mutex_(std::move(mutex)), session_(session), channel_(channel), command_(std::move(command)) {}

    ~LibsshProcess() override {
        std::lock_guard<std::mutex> lock(*mutex_);
        end_locked();
    }

    Status write_stdin(const std::string& bytes) override {
        std::lock_guard<std::mutex> lock(*mutex_);
        if (Status s = require_channel("writing to"); !s) return s;
        std::size_t done = 0;
        while (done < bytes.size()) {
            const int n =
                ssh_channel_write(channel_, bytes.data() + done,
                                  static_cast<uint32_t>(std::min<std::size_t>(bytes.size() - done, 32768)));
            if (n == SSH_ERROR) return failure("writing to");
            done += static_cast<std::size_t>(n);
        }
        return Status::Ok();
    }

    Status close_stdin() override {
        std::lock_guard<std::mutex> lock(*mutex_);
        if (Status s = require_channel("closing the input of"); !s) return s;
        if (ssh_channel_send_eof(channel_) != SSH_OK) return failure("closing the input of");
        return Status::Ok();
    }

    Result<Output> read_available(std::chrono::milliseconds timeout) override {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        Output output;
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(*mutex_);
                if (exited_) return output;
                if (Status s = require_channel("reading from"); !s) return s;
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now());
                // One slice of at most 50 ms under the lock, then the lock is let go for other calls.
                const int slice = static_cast<int>(std::clamp<long long>(left.count(), 0, 50));
                char buffer[16384];
                int n = slice > 0 ? ssh_channel_read_timeout(channel_, buffer, sizeof buffer, 0, slice)
                                  : ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 0);
                if (n == SSH_ERROR) return failure("reading from");
                if (n > 0) output.out.append(buffer, static_cast<std::size_t>(n));
                while ((n = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 0)) > 0)
                    output.out.append(buffer, static_cast<std::size_t>(n));
                if (n == SSH_ERROR) return failure("reading from");
                while ((n = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 1)) > 0)
                    output.err.append(buffer, static_cast<std::size_t>(n));
                if (n == SSH_ERROR) return failure("reading the errors of");
                if (ssh_channel_is_eof(channel_)) {
                    // All output is in: the exit status follows the EOF.
                    exit_status_ = ssh_channel_get_exit_status(channel_);
                    exited_ = true;
                    end_locked();
                    return output;
                }
                if (!output.out.empty() || !output.err.empty()) return output;
                if (left.count() <= 0) return output;
            }
            std::this_thread::yield();
        }
    }

    bool exited() const override {
        std::lock_guard<std::mutex> lock(*mutex_);
        return exited_;
    }

    int exit_status() const override {
        std::lock_guard<std::mutex> lock(*mutex_);
        return exit_status_;
    }

    Status terminate() override {
        std::lock_guard<std::mutex> lock(*mutex_);
        exited_ = true;
        end_locked();
        return Status::Ok();
    }

    // Under the lock, from the session: the connection goes, and the channel with it.
    void detach_locked() {
        if (channel_ != nullptr) {
            ssh_channel_close(channel_);
            ssh_channel_free(channel_);
        }
        channel_ = nullptr;
        session_ = nullptr;
        lost_ = true;
    }

private:
    Status require_channel(const char* what) const {
        if (channel_ != nullptr) return Status::Ok();
        return Status::Error(StatusCode::kUnavailable,
                             std::string(what) + " '" + command_ +
                                 "': " + (lost_ ? "the connection was lost" : "the process has ended"));
    }

    Status failure(const char* what) const {
        return session_->failure(std::string(what) + " '" + command_ + "'");
    }

    // TERM to the command (OpenSSH honours "signal" requests), end of its input, the channel closed.
    void end_locked() {
        if (channel_ == nullptr) return;
        if (!exited_ || exit_status_ < 0) {
            if (ssh_channel_is_open(channel_) && !ssh_channel_is_eof(channel_)) {
                ssh_channel_request_send_signal(channel_, "TERM");
                ssh_channel_send_eof(channel_);
            }
        }
        ssh_channel_close(channel_);
        ssh_channel_free(channel_);
        channel_ = nullptr;
        session_->processes_.erase(this);
        session_ = nullptr;
    }

    const std::shared_ptr<std::mutex> mutex_;
    LibsshSession* session_;  // valid while channel_ is set
    ssh_channel channel_;
    const std::string command_;
    bool exited_ = false;
    bool lost_ = false;
    int exit_status_ = -1;
};

void detach_process_locked(LibsshProcess* process) {
    process->detach_locked();
}

Result<std::unique_ptr<RemoteProcess>> LibsshSession::start_process(const std::string& command) {
    std::lock_guard<std::mutex> lock(*mutex_);
    if (Status s = require_connection("start_process"); !s) return s;
    ssh_channel channel = ssh_channel_new(connection_->raw());
    if (channel == nullptr) return failure("start_process: cannot create a channel");
    if (ssh_channel_open_session(channel) != SSH_OK) {
        ssh_channel_free(channel);
        return failure("start_process: cannot open a channel");
    }
    if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
        Status s = failure("start_process: the server refused '" + command + "'");
        ssh_channel_close(channel);
        ssh_channel_free(channel);
        return s;
    }
    auto process = std::make_unique<LibsshProcess>(mutex_, this, channel, command);
    processes_.insert(process.get());
    return std::unique_ptr<RemoteProcess>(std::move(process));
}

}  // namespace slipway::remote
