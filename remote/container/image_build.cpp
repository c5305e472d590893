// enroot commands and the remote image build (see image_build.h).
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

Result<int> build_image_remotely(Session& session, const RemoteBuildRequest& request,
                                 const std::function<void(const std::string& line)>& on_line) {
    if (Status s = check_image_reference(request.image); !s.ok()) return s;
    if (request.build_dir.empty() || request.build_dir[0] != '/')
        return Status::Error("remote build folder must be absolute, got \"" + request.build_dir + "\"");
    const std::string dir = request.build_dir;
    if (Status s = session.mkdir_p(dir, 0700); !s.ok()) return s;
    for (const char* stale : {"/build.log", "/build.rc"}) {
        if (Status s = session.remove(dir + stale); !s.ok()) return s;
    }
    if (Status s = session.upload_bytes(request.dockerfile, dir + "/Dockerfile", 0644); !s.ok()) return s;
    if (Status s = session.upload_file(request.context_tarball, dir + "/context.tar.gz", 0644); !s.ok())
        return s;

    // The build runs detached; its exit status lands in build.rc (written whole, then renamed).
    Result<std::string> build =
        shell_command({"docker", "build", "-f", "Dockerfile", "-t", request.image, "context"});
    if (!build.ok()) return build.status();
    std::string steps = "rm -rf context && mkdir context && tar -xzf context.tar.gz -C context && " + *build;
    if (!request.sqsh.empty()) {
        Result<std::string> import = enroot_import_command(request.image, request.sqsh);
        if (!import.ok()) return import.status();
        steps += " && " + *import;
    }
    const std::string script =
        "(" + steps + ") > build.log 2>&1; echo $? > build.rc.tmp && mv build.rc.tmp build.rc";
    Result<std::string> quoted_script = shell_quote(script, "build script");
    Result<std::string> quoted_dir = shell_quote(dir, "build folder");
    if (!quoted_script.ok()) return quoted_script.status();
    if (!quoted_dir.ok()) return quoted_dir.status();
    const std::string start =
        "cd " + *quoted_dir + " && nohup sh -c " + *quoted_script + " > /dev/null 2>&1 < /dev/null &";
    Result<ExecResult> started = session.exec(start, std::chrono::seconds(30));
    if (!started.ok()) return started.status();
    if (started->exit_status != 0)
        return Status::Error(session.describe() + ": could not start the build: " + started->err);

    RemoteLogFollower follower(session, dir + "/build.log",
                               [&on_line](MllogStreamItem&& item) { on_line(item.text); });
    const auto deadline = std::chrono::steady_clock::now() + request.timeout;
    while (true) {
        Result<PollResult> polled = follower.poll();
        if (!polled.ok()) return polled.status();
        Result<RemoteStat> rc = session.stat(dir + "/build.rc");
        if (!rc.ok()) return rc.status();
        if (rc->exists) {
            if (Result<PollResult> last = follower.poll(); !last.ok()) return last.status();
            follower.finish();
            Result<std::string> text = session.read_range(dir + "/build.rc", 0, 64);
            if (!text.ok()) return text.status();
            try {
                return std::stoi(*text);
            } catch (const std::exception&) {
                return Status::Error(dir + "/build.rc: not an exit status: \"" + *text + "\"");
            }
        }
        if (std::chrono::steady_clock::now() > deadline)
            return Status::Error(StatusCode::kTimeout, "image build on " + session.describe() +
                                                           " still running after " +
                                                           std::to_string(request.timeout.count()) +
                                                           " s; see " + dir + "/build.log");
        std::this_thread::sleep_for(request.poll_interval);
    }
}

}  // namespace slipway::remote
