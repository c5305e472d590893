// enroot commands and the remote image build and import (see image_build.h).
#include "remote/container/image_build.h"

#include <regex>
#include <thread>

#include "remote/runlog/log_follower.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {

Status check_image_reference(const std::string& image) {
    static const std::regex reference("[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9._-]+)?(@sha256:[a-f0-9]{64})?");
    if (!std::regex_match(image, reference))
        return Status::Error("\"" + image + "\" is not a Docker image reference (lowercase name[:tag])");
    return Status::Ok();
}

Result<std::string> enroot_import_command(const std::string& image, const std::string& sqsh) {
    if (Status s = check_image_reference(image); !s.ok()) return s;
    return shell_command({"enroot", "import", "-o", sqsh, "dockerd://" + image});
}

Result<std::string> enroot_import_from_tarball_command(const std::string& tarball, const std::string& image,
                                                       const std::string& sqsh) {
    if (Status s = check_image_reference(image); !s.ok()) return s;
    Result<std::string> load = shell_command({"podman", "load", "-i", tarball});
    Result<std::string> import = shell_command({"enroot", "import", "-o", sqsh, "podman://" + image});
    if (!load.ok()) return load.status();
    if (!import.ok()) return import.status();
    return *load + " && " + *import;
}

namespace {

// Starts `steps` detached in `dir` (nohup sh -c, output to NAME.log, exit status to NAME.rc, written whole
// then renamed) and follows the log until the status appears.
Result<int> run_detached(Session& session, const std::string& dir, const std::string& name,
                         const std::string& steps, const RemoteJobOptions& job,
                         const std::function<void(const std::string& line)>& on_line) {
    std::string script;
    if (!job.tool_dir.empty()) {
        Result<std::string> tools = shell_quote(job.tool_dir, "tool folder");
        if (!tools.ok()) return tools.status();
        script = "PATH=" + *tools + ":\"$PATH\"; export PATH; ";
    }
    script += "(" + steps + ") > " + name + ".log 2>&1; echo $? > " + name + ".rc.tmp && mv " + name +
              ".rc.tmp " + name + ".rc";
    Result<std::string> quoted_script = shell_quote(script, name + " script");
    Result<std::string> quoted_dir = shell_quote(dir, name + " folder");
    if (!quoted_script.ok()) return quoted_script.status();
    if (!quoted_dir.ok()) return quoted_dir.status();
    const std::string start =
        "cd " + *quoted_dir + " && nohup sh -c " + *quoted_script + " > /dev/null 2>&1 < /dev/null &";
    Result<ExecResult> started = session.exec(start, std::chrono::seconds(30));
    if (!started.ok()) return started.status();
    if (started->exit_status != 0)
        return Status::Error(session.describe() + ": could not start the " + name + ": " + started->err);

    const std::string log = dir + "/" + name + ".log";
    const std::string rc_file = dir + "/" + name + ".rc";
    LogFollower follower(std::make_unique<SessionFileSource>(session, log),
                         [&on_line](MllogStreamItem&& item) { on_line(item.text); });
    const auto deadline = std::chrono::steady_clock::now() + job.timeout;
    while (true) {
        Result<PollResult> polled = follower.poll();
        if (!polled.ok()) return polled.status();
        Result<RemoteStat> rc = session.stat(rc_file);
        if (!rc.ok()) return rc.status();
        if (rc->exists) {
            if (Result<PollResult> last = follower.poll(); !last.ok()) return last.status();
            follower.finish();
            Result<std::string> text = session.read_range(rc_file, 0, 64);
            if (!text.ok()) return text.status();
            try {
                return std::stoi(*text);
            } catch (const std::exception&) {
                return Status::Error(rc_file + ": not an exit status: \"" + *text + "\"");
            }
        }
        if (job.stop_requested && job.stop_requested())
            return Status::Error("stopped following the " + name + "; it goes on on " + session.describe() +
                                 ", see " + log);
        if (std::chrono::steady_clock::now() > deadline)
            return Status::Error(StatusCode::kTimeout,
                                 "image " + name + " on " + session.describe() + " still running after " +
                                     std::to_string(job.timeout.count()) + " s; see " + log);
        std::this_thread::sleep_for(job.poll_interval);
    }
}

// The folder gets fresh files: an old status must not end the new job at once.
Status prepare_folder(Session& session, const std::string& dir, const std::string& name) {
    if (dir.empty() || dir[0] != '/')
        return Status::Error("remote " + name + " folder must be absolute, got \"" + dir + "\"");
    if (Status s = session.mkdir_p(dir, 0700); !s.ok()) return s;
    for (const std::string& stale : {dir + "/" + name + ".log", dir + "/" + name + ".rc"}) {
        if (Status s = session.remove(stale); !s.ok()) return s;
    }
    return Status::Ok();
}

}  // namespace

Result<int> build_image_remotely(Session& session, const RemoteBuildRequest& request,
                                 const std::function<void(const std::string& line)>& on_line) {
    if (Status s = check_image_reference(request.image); !s.ok()) return s;
    const std::string dir = request.build_dir;
    if (Status s = prepare_folder(session, dir, "build"); !s.ok()) return s;
    if (Status s = session.upload_bytes(request.dockerfile, dir + "/Dockerfile", 0644); !s.ok()) return s;
    if (Status s = session.upload_file(request.context_tarball, dir + "/context.tar.gz", 0644); !s.ok())
        return s;
    Result<std::string> build =
        shell_command({"docker", "build", "-f", "Dockerfile", "-t", request.image, "context"});
    if (!build.ok()) return build.status();
    std::string steps = "rm -rf context && mkdir context && tar -xzf context.tar.gz -C context && " + *build;
    if (!request.sqsh.empty()) {
        Result<std::string> import = enroot_import_command(request.image, request.sqsh);
        if (!import.ok()) return import.status();
        steps += " && " + *import;
    }
    return run_detached(session, dir, "build", steps, request.job, on_line);
}

Result<int> import_image_remotely(Session& session, const RemoteImportRequest& request,
                                  const std::function<void(const std::string& line)>& on_line) {
    Result<std::string> import = enroot_import_command(request.image, request.sqsh);
    if (!import.ok()) return import.status();
    if (Status s = prepare_folder(session, request.dir, "import"); !s.ok()) return s;
    return run_detached(session, request.dir, "import", *import, request.job, on_line);
}

}  // namespace slipway::remote
