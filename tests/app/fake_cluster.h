// A Slurm cluster for the app's headless tests, with no network: one FakeSession (SFTP files, injected
// faults) behind a mutex, shared by every connection the ClusterSession's connector opens, so the test
// thread scripts it while the session's worker thread uses it. Its exec handler plays Slurm from a job
// table: sbatch --test-only / --parsable (the next job id, PENDING), squeue of one or several jobs,
// scontrol / sacct for a job, scancel (CANCELLED, or refused with a message), sinfo of nodes (every node
// of its node table).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "clusters/cluster_session.h"
#include "remote/ssh/fake_session.h"

namespace slipway::app::testing_util {

class FakeCluster {
public:
    FakeCluster() : shared_(std::make_shared<Shared>()) {
        std::weak_ptr<Shared> weak = shared_;
        shared_->fake.set_exec_handler([weak](const std::string& command) -> Result<remote::ExecResult> {
            const std::shared_ptr<Shared> s = weak.lock();  // called with s->mutex held
            if (!s) return Status::Error("the fake cluster is gone");
            return s->slurm(command);
        });
    }

    // What ClusterSessions::set_connector takes: every connection is the same cluster.
    ClusterSession::Connector connector() const {
        return [shared = shared_](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
            std::lock_guard lock(shared->mutex);
            ++shared->connections;
            return Result<std::unique_ptr<remote::Session>>(std::make_unique<SharedSession>(shared));
        };
    }

    // A job's Slurm state as squeue reports it ("RUNNING", "COMPLETED", "NODE_FAIL", ...); "" forgets the
    // job (squeue, scontrol and sacct no longer know it).
    void set_job(const std::string& job, const std::string& state, const std::string& reason = "None") {
        std::lock_guard lock(shared_->mutex);
        shared_->jobs[job] = {state, reason};
    }
    // The nodes a started job runs on, as squeue prints them ("node[1-2]"; default node01).
    void set_job_nodes(const std::string& job, const std::string& node_list) {
        std::lock_guard lock(shared_->mutex);
        shared_->job_nodes[job] = node_list;
    }
    // A node's state as sinfo reports it ("allocated", "down*"); sinfo lists every node set here.
    void set_node_state(const std::string& node, const std::string& state) {
        std::lock_guard lock(shared_->mutex);
        shared_->node_states[node] = state;
    }
    std::string job_state(const std::string& job) const {
        std::lock_guard lock(shared_->mutex);
        const auto it = shared_->jobs.find(job);
        return it == shared_->jobs.end() ? std::string() : it->second.state;
    }
    // A file on the cluster as uploaded or written there ("" when there is none).
    std::string file(const std::string& path) const {
        std::lock_guard lock(shared_->mutex);
        return shared_->fake.has(path) ? shared_->fake.file(path) : std::string();
    }
    void append_log(const std::string& path, const std::string& bytes) {
        std::lock_guard lock(shared_->mutex);
        shared_->fake.append_file(path, bytes);
    }
    void drop_connection() {
        std::lock_guard lock(shared_->mutex);
        shared_->fake.drop_connection();
    }
    // The next `count` calls of any connection (reconnect included) fail with `fault`.
    void fail_next(remote::FakeFault fault, int count) {
        std::lock_guard lock(shared_->mutex);
        shared_->fake.fail_next(fault, count);
    }
    // scancel fails with this message on stderr (empty: scancel works).
    void refuse_scancel(std::string message) {
        std::lock_guard lock(shared_->mutex);
        shared_->scancel_error = std::move(message);
    }
    // sbatch --test-only refuses the job with this message (empty: accepted).
    void refuse_submissions(std::string message) {
        std::lock_guard lock(shared_->mutex);
        shared_->sbatch_error = std::move(message);
    }
    int connections() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->connections;
    }
    int reconnects() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->fake.reconnect_count();
    }
    std::vector<std::string> commands() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->fake.commands();
    }

private:
    struct Job {
        std::string state;
        std::string reason;
    };
    struct Shared {
        mutable std::mutex mutex;
        remote::FakeSession fake{"researcher@login.example.org:22"};
        std::map<std::string, Job> jobs;
        std::map<std::string, std::string> job_nodes;
        std::map<std::string, std::string> node_states;
        int next_job = 100;
        int connections = 0;
        std::string scancel_error;
        std::string sbatch_error;

        static std::string job_in(const std::string& command, const char* pattern) {
            std::smatch m;
            return std::regex_search(command, m, std::regex(pattern)) ? m[1].str() : std::string();
        }
        Result<remote::ExecResult> slurm(const std::string& command) {
            using remote::ExecResult;
            if (command.rfind("printf '%s' \"$HOME\"", 0) == 0) return ExecResult{"/home/researcher", "", 0};
            if (command.find("sbatch --test-only") != std::string::npos) {
                if (!sbatch_error.empty()) return ExecResult{"", "sbatch: error: " + sbatch_error, 1};
                return ExecResult{"", "sbatch: Job " + std::to_string(next_job) + " to start soon", 0};
            }
            if (command.find("sbatch --parsable") != std::string::npos) {
                const std::string job = std::to_string(next_job++);
                jobs[job] = {"PENDING", "Priority"};
                return ExecResult{job + "\n", "", 0};
            }
            if (command.rfind("squeue", 0) == 0) {
                // As Slurm's squeue: the known jobs of the -j list; one unknown job alone is an error.
                std::stringstream listed(job_in(command, R"(-j '?([\d,]+))"));
                std::string rows;
                int asked = 0;
                for (std::string job; std::getline(listed, job, ',');) {
                    ++asked;
                    const auto it = jobs.find(job);
                    if (it == jobs.end() || it->second.state.empty()) continue;
                    const bool started = it->second.state != "PENDING";
                    const auto nodes = job_nodes.find(job);
                    const std::string node_list = nodes == job_nodes.end() ? "node01" : nodes->second;
                    rows += job + "|" + it->second.state + "|" + it->second.reason + "|0:05|1|" +
                            (started ? node_list : "(" + it->second.reason + ")") + "\n";
                }
                if (asked == 1 && rows.empty())
                    return ExecResult{"", "slurm_load_jobs error: Invalid job id specified", 1};
                return ExecResult{rows, "", 0};
            }
            if (command.rfind("sinfo", 0) == 0) {
                std::string rows;
                for (const auto& [node, state] : node_states)
                    rows += node + "|debug*|" + state + "|2|4000|(null)\n";
                return ExecResult{rows, "", 0};
            }
            if (command.rfind("scontrol", 0) == 0 || command.rfind("sacct", 0) == 0)
                return ExecResult{"", "not known here", 1};  // squeue's answer stands
            if (command.rfind("scancel", 0) == 0) {
                if (!scancel_error.empty()) return ExecResult{"", scancel_error, 1};
                const std::string job = job_in(command, R"(scancel '?(\d+))");
                jobs[job] = {"CANCELLED", "None"};
                return ExecResult{"", "", 0};
            }
            return Status::Error("fake cluster: no answer for: " + command);
        }
    };

    // One connection: every call goes to the shared fake under its mutex.
    class SharedSession : public remote::Session {
        template <typename F>
        auto locked(F&& call) const {
            std::lock_guard lock(shared_->mutex);
            return call(shared_->fake);
        }
        std::shared_ptr<Shared> shared_;

    public:
        explicit SharedSession(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
        std::string describe() const override {
            return locked([](auto& f) { return f.describe(); });
        }
        bool is_connected() const override {
            return locked([](auto& f) { return f.is_connected(); });
        }
        Status reconnect() override {
            return locked([](auto& f) { return f.reconnect(); });
        }
        void disconnect() override {
            std::lock_guard lock(shared_->mutex);
            shared_->fake.disconnect();
        }
        Result<remote::ExecResult> exec(const std::string& c, std::chrono::milliseconds t) override {
            return locked([&](auto& f) { return f.exec(c, t); });
        }
        // The process itself is used by one thread (the chat's), outside the shared lock.
        Result<std::unique_ptr<remote::RemoteProcess>> start_process(const std::string& c) override {
            std::lock_guard lock(shared_->mutex);
            return shared_->fake.start_process(c);
        }
        Status upload_file(const std::string& l, const std::string& r, std::uint32_t m) override {
            return locked([&](auto& f) { return f.upload_file(l, r, m); });
        }
        Status upload_bytes(const std::string& b, const std::string& r, std::uint32_t m) override {
            return locked([&](auto& f) { return f.upload_bytes(b, r, m); });
        }
        Status download_file(const std::string& r, const std::string& l) override {
            return locked([&](auto& f) { return f.download_file(r, l); });
        }
        Result<std::string> read_range(const std::string& r, std::uint64_t o, std::size_t n) override {
            return locked([&](auto& f) { return f.read_range(r, o, n); });
        }
        Result<remote::RemoteStat> stat(const std::string& r) override {
            return locked([&](auto& f) { return f.stat(r); });
        }
        Result<std::vector<remote::RemoteDirEntry>> list_directory(const std::string& r) override {
            return locked([&](auto& f) { return f.list_directory(r); });
        }
        Status mkdir_p(const std::string& r, std::uint32_t m) override {
            return locked([&](auto& f) { return f.mkdir_p(r, m); });
        }
        Status remove(const std::string& r) override {
            return locked([&](auto& f) { return f.remove(r); });
        }
    };

    std::shared_ptr<Shared> shared_;
};

}  // namespace slipway::app::testing_util
