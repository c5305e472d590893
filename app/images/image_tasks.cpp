// Image build and import tasks shared by the CLI and the Container page (see image_tasks.h).
#include "images/image_tasks.h"

#include <unistd.h>

#include <QCoreApplication>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

#include "remote/container/dockerfile.h"
#include "remote/container/ngc_catalogue.h"
#include "remote/deploy/deploy.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

// The translation context of the Container page's hints ("ImageTasks").
struct ImageTasks {
    Q_DECLARE_TR_FUNCTIONS(ImageTasks)
};

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// A local temporary file removed when the task ends, however it ends.
class TemporaryFile {
public:
    explicit TemporaryFile(const std::string& stem)
        : path_((fs::temp_directory_path() /
                 (stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".tar.gz"))
                    .string()) {}
    ~TemporaryFile() {
        std::error_code ec;
        fs::remove(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    static inline int counter_ = 0;
    std::string path_;
};

Status run_local(const std::vector<std::string>& argv) {
    Result<std::string> command = remote::shell_command(argv);
    if (!command.ok()) return command.status();
    if (std::system(command->c_str()) != 0) return Status::Error("`" + *command + "` failed");
    return Status::Ok();
}

// The context the engine stage copies: `git archive` of the source tree. Without the engine stage nothing
// is copied from the context, and an empty archive will do.
Result<std::string> make_context(const ImageTask& task, TemporaryFile& file) {
    if (!task.config.container.build_engine) {
        if (Status s = run_local({"tar", "-czf", file.path(), "-T", "/dev/null"}); !s.ok()) return s;
        return file.path();
    }
    if (task.source_root.empty() || !fs::exists(fs::path(task.source_root) / ".git"))
        return Status::Error("no Slipway source tree with git history found; pass --context TARBALL");
    if (Status s = run_local(
            {"git", "-C", task.source_root, "archive", "--format=tar.gz", "-o", file.path(), "HEAD"});
        !s.ok())
        return s;
    return file.path();
}

// <workdir>/images/<tag as a file name>-<time>[-import]
std::string task_folder(const std::string& workdir, const std::string& image, ImageAction action) {
    std::string name;
    for (char ch : image)
        name += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-') ? ch : '_';
    return workdir + "/images/" + name + "-" + std::to_string(std::time(nullptr)) +
           (action == ImageAction::kImport ? "-import" : "");
}

}  // namespace

Result<std::string> image_dockerfile(const RunConfig& config, const std::string& source_root) {
    std::optional<remote::NgcCatalogue> catalogue;
    if (!source_root.empty()) {
        Result<remote::NgcCatalogue> loaded =
            remote::load_ngc_catalogue(source_root + "/resources/containers/ngc-pytorch.json");
        if (loaded.ok()) catalogue = std::move(*loaded);
    }
    remote::DockerfileOptions options;
    options.catalogue = catalogue ? &*catalogue : nullptr;
    return remote::render_dockerfile(config, options);
}

Result<ImageTaskOutcome> run_image_task(remote::Session& session, const ImageTask& task,
                                        const std::function<void(const std::string& line)>& on_line) {
    if (Status s = remote::check_image_reference(task.image); !s.ok()) return s;
    if (task.action == ImageAction::kImport && task.sqsh.empty())
        return Status::Error("no .sqsh path to import " + task.image + " into");
    Result<std::string> workdir = remote::resolve_remote_path(session, task.remote_workdir);
    if (!workdir.ok()) return workdir.status();
    std::string sqsh;
    if (!task.sqsh.empty()) {
        Result<std::string> resolved = remote::resolve_remote_path(session, task.sqsh);
        if (!resolved.ok()) return resolved.status();
        sqsh = *resolved;
    }
    remote::RemoteJobOptions job = task.job;
    if (job.tool_dir.empty()) job.tool_dir = *workdir + "/bin";
    const std::string folder = task_folder(*workdir, task.image, task.action);

    if (task.action == ImageAction::kImport) {
        on_line("importing " + task.image + " into " + sqsh + " on " + session.describe() + " (log in " +
                folder + ")");
        remote::RemoteImportRequest request{folder, task.image, sqsh, job};
        Result<int> rc = remote::import_image_remotely(session, request, on_line);
        if (!rc.ok()) return rc.status();
        return ImageTaskOutcome{*rc, folder + "/import.log"};
    }
    Result<std::string> dockerfile = image_dockerfile(task.config, task.source_root);
    if (!dockerfile.ok()) return dockerfile.status();
    TemporaryFile made("slipway-context");
    std::string context = task.context;
    if (context.empty()) {
        Result<std::string> built = make_context(task, made);
        if (!built.ok()) return built.status();
        context = *built;
    }
    on_line("building " + task.image + " on " + session.describe() + " in " + folder);
    remote::RemoteBuildRequest request{folder, *dockerfile, context, task.image, sqsh, job};
    Result<int> rc = remote::build_image_remotely(session, request, on_line);
    if (!rc.ok()) return rc.status();
    return ImageTaskOutcome{*rc, folder + "/build.log"};
}

std::string default_image_tag(const RunConfig& config) {
    std::string name;
    for (char ch : config.name) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
        name += keep ? c : '-';
    }
    while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.front())))
        name.erase(name.begin());
    while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.back())))
        name.pop_back();
    if (name.empty()) name = "run";
    const std::optional<std::string> release = remote::ngc_pytorch_tag(config.container.base);
    return "slipway/" + name + ":" + (release ? *release : std::string("custom"));
}

ImageActionState image_action_state(ImageAction action, const RunConfig& config, bool config_valid,
                                    const remote::ClusterProfile* target, const std::string& image,
                                    bool task_running) {
    auto no = [](const QString& reason) { return ImageActionState{false, reason.toStdString()}; };
    if (task_running) return no(ImageTasks::tr("An image build or import is running: its output is below."));
    if (target == nullptr)
        return no(
            ImageTasks::tr("This computer has no build host: choose a cluster under \"Run on\"; its login "
                           "host builds with docker and imports with enroot."));
    if (Status s = remote::check_image_reference(image); !s.ok())
        return no(ImageTasks::tr("Image tag: %1").arg(q(s.message())));
    if (action == ImageAction::kBuild) {
        if (!config_valid)
            return no(ImageTasks::tr("Fix the run config's problems first: only a valid config is built."));
        return {true, ImageTasks::tr("docker build %1 on %2 from this Dockerfile; the output streams below.")
                          .arg(q(image), q(target->host))
                          .toStdString()};
    }
    const std::string& sqsh = config.slurm.container_image;
    if (target->container == remote::ContainerMode::kNone)
        return no(
            ImageTasks::tr("Cluster %1 runs bare srun (container: none): a .sqsh is only used with pyxis.")
                .arg(q(target->name)));
    if (sqsh.empty())
        return no(ImageTasks::tr(
            "slurm.container_image is empty: the run uses no container image to import into."));
    if (sqsh.size() < 5 || sqsh.compare(sqsh.size() - 5, 5, ".sqsh") != 0)
        return no(ImageTasks::tr(
            "slurm.container_image is not a .sqsh file (pyxis pulls registry images itself)."));
    return {true, ImageTasks::tr("enroot import %1 (built on %2) into %3.")
                      .arg(q(image), q(target->host), q(sqsh))
                      .toStdString()};
}

}  // namespace slipway::app
