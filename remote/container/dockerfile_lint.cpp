// The Dockerfile linter (see dockerfile_lint.h): one check per rule over what dockerfile_reader.h reads.
// Every finding points at the physical line of the word it is about (a package in a continued RUN).
#include "remote/container/dockerfile_lint.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "contract/run_config.h"
#include "remote/container/dockerfile_reader.h"

namespace slipway::remote {
namespace {

using dockerfile::Command;
using dockerfile::Instruction;
using dockerfile::shell_words;
using dockerfile::trim;
using dockerfile::Word;

const std::vector<LintRule> kRules = {
    {"first-from", LintSeverity::kError, "The first instruction (after ARG) must be FROM."},
    {"unknown-instruction", LintSeverity::kError, "An instruction docker does not know fails the build."},
    {"instruction-case", LintSeverity::kInfo,
     "Instructions in lower case work, but the convention (and dockerfile-utils) is upper case."},
    {"base-tag", LintSeverity::kWarning,
     "FROM without a tag or with :latest builds from whatever that tag means on the day; name the release."},
    {"env-secret", LintSeverity::kError,
     "ENV or ARG named like a secret (TOKEN, PASSWORD, ...) stays in the image's layers and history."},
    {"pip-replaces-torch", LintSeverity::kError,
     "pip installing torch, torchvision, torchaudio or NCCL on an NGC base replaces the torch built for the "
     "image's CUDA and NCCL (seed 000)."},
    {"pip-unconstrained", LintSeverity::kWarning,
     "pip install on an NGC base without --constraint: a dependency may pull another torch over the "
     "image's."},
    {"pip-unpinned", LintSeverity::kWarning,
     "A pip package without ==version installs whatever is newest when the image is built."},
    {"pip-cache", LintSeverity::kInfo,
     "pip install without --no-cache-dir keeps its wheel cache in the layer."},
    {"apt-no-update", LintSeverity::kWarning,
     "apt-get install without apt-get update earlier in the same RUN uses stale or missing package lists."},
    {"apt-no-yes", LintSeverity::kError,
     "apt-get install without -y stops at its confirmation question: the build fails."},
    {"apt-upgrade", LintSeverity::kWarning,
     "apt-get upgrade can replace the CUDA, cuDNN and NCCL libraries the base image's torch was built for."},
    {"apt-recommends", LintSeverity::kInfo,
     "apt-get install without --no-install-recommends adds packages nobody asked for."},
    {"apt-lists", LintSeverity::kInfo,
     "apt-get update without rm -rf /var/lib/apt/lists/* in the same RUN keeps the lists in the layer."},
    {"add-not-copy", LintSeverity::kWarning,
     "ADD of a local file or folder: COPY does the same without ADD's archive and URL handling."},
    {"workdir-relative", LintSeverity::kWarning,
     "A relative WORKDIR depends on every WORKDIR before it; use an absolute path."},
    {"sudo", LintSeverity::kWarning, "sudo in RUN: build steps already run as root or as USER."},
};

std::set<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::set<std::string> words;
    for (std::string word; in >> word;)
        words.insert(word);
    return words;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string basename(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_assignment(const std::string& word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    return std::all_of(word.begin(), word.begin() + static_cast<long>(eq),
                       [](unsigned char c) { return std::isalnum(c) || c == '_'; }) &&
           !std::isdigit(static_cast<unsigned char>(word[0]));
}

// What a build stage carries into the stages built FROM it.
struct Stage {
    bool ngc = false;             // an NGC PyTorch base: its torch must stay
    bool pip_no_cache = false;    // ENV PIP_NO_CACHE_DIR
    bool pip_constraint = false;  // ENV PIP_CONSTRAINT
};

class Linter {
public:
    std::vector<LintFinding> run(const std::string& text) {
        bool seen_from = false;
        bool reported_first_from = false;
        for (const Instruction& ins : dockerfile::read_instructions(text)) {
            static const std::set<std::string> known = {
                "FROM",    "RUN", "CMD",     "LABEL",      "MAINTAINER",  "EXPOSE",
                "ENV",     "ADD", "COPY",    "ENTRYPOINT", "VOLUME",      "USER",
                "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"};
            if (known.count(ins.keyword) == 0) {
                add(ins.line, "unknown-instruction", ins.keyword + " is not a Dockerfile instruction");
                continue;
            }
            if (!ins.written_upper)
                add(ins.line, "instruction-case", "write " + ins.keyword + " in upper case");
            if (!seen_from && ins.keyword != "FROM" && ins.keyword != "ARG" && !reported_first_from) {
                add(ins.line, "first-from",
                    ins.keyword +
                        " before the first FROM: a Dockerfile starts with FROM (only ARG may come "
                        "before it)");
                reported_first_from = true;
            }
            if (ins.keyword == "FROM") {
                seen_from = true;
                from(ins);
            } else if (ins.keyword == "ENV" || ins.keyword == "ARG") {
                env_or_arg(ins);
            } else if (ins.keyword == "RUN") {
                run_instruction(ins);
            } else if (ins.keyword == "ADD") {
                add_instruction(ins);
            } else if (ins.keyword == "WORKDIR") {
                std::vector<Word> words = shell_words(ins.args);
                const std::string path = words.empty() ? std::string() : words.front().text;
                if (!path.empty() && path[0] != '/' && path[0] != '$')
                    add(ins.line, "workdir-relative",
                        "WORKDIR " + path + " is relative: use an absolute path");
            }
        }
        auto order = [](const LintFinding& f) {
            size_t i = 0;
            while (i < kRules.size() && f.rule != kRules[i].id)
                ++i;
            return std::make_pair(f.line, i);
        };
        std::stable_sort(
            findings_.begin(), findings_.end(),
            [&order](const LintFinding& a, const LintFinding& b) { return order(a) < order(b); });
        return std::move(findings_);
    }

private:
    void add(int line, const std::string& rule, std::string message) {
        for (const LintRule& r : kRules) {
            if (rule == r.id) findings_.push_back(LintFinding{line, r.severity, rule, std::move(message)});
        }
    }

    void from(const Instruction& ins) {
        std::string image;
        std::string alias;
        const std::vector<Word> words = shell_words(ins.args);
        for (size_t i = 0; i < words.size(); ++i) {
            if (starts_with(words[i].text, "--")) continue;  // --platform=...
            if (image.empty()) {
                image = words[i].text;
            } else if (lower(words[i].text) == "as" && i + 1 < words.size()) {
                alias = lower(words[i + 1].text);
                break;
            }
        }
        const auto earlier = stages_.find(lower(image));
        if (earlier != stages_.end()) {
            stage_ = earlier->second;  // FROM an earlier stage: same base, same environment
        } else {
            stage_ = Stage{};
            stage_.ngc = starts_with(image, "nvcr.io/nvidia/pytorch:");
            const std::string last = basename(image);
            const bool checkable = !image.empty() && image != "scratch" &&
                                   image.find('$') == std::string::npos &&
                                   image.find('@') == std::string::npos;
            const size_t colon = last.find(':');
            if (checkable && colon == std::string::npos) {
                add(ins.line, "base-tag",
                    image +
                        " has no tag: it builds from whatever :latest is that day; name the release "
                        "(e.g. nvcr.io/nvidia/pytorch:24.04-py3)");
            } else if (checkable && last.substr(colon + 1) == "latest") {
                add(ins.line, "base-tag", image + " moves with every release: name one (e.g. 24.04-py3)");
            }
        }
        current_alias_ = alias;
        if (!current_alias_.empty()) stages_[current_alias_] = stage_;
    }

    void env_or_arg(const Instruction& ins) {
        const std::vector<Word> words = shell_words(ins.args);
        std::vector<std::string> names;
        if (!words.empty() && words[0].text.find('=') == std::string::npos) {
            names.push_back(words[0].text);  // ENV NAME value, ARG NAME
        } else {
            for (const Word& w : words)
                names.push_back(w.text.substr(0, w.text.find('=')));
        }
        for (const std::string& name : names) {
            if (is_secret_env_name(name)) {
                add(ins.line, "env-secret",
                    name + " looks like a secret: " + ins.keyword +
                        " values stay in the image's layers and `docker history`; pass it when the job runs");
            }
            if (ins.keyword == "ENV" && name == "PIP_NO_CACHE_DIR") stage_.pip_no_cache = true;
            if (ins.keyword == "ENV" && name == "PIP_CONSTRAINT") stage_.pip_constraint = true;
        }
        if (!current_alias_.empty()) stages_[current_alias_] = stage_;
    }

    void add_instruction(const Instruction& ins) {
        std::vector<std::string> paths = dockerfile::exec_form(ins.args);
        if (paths.empty()) {
            for (const Word& w : shell_words(ins.args)) {
                if (!starts_with(w.text, "--")) paths.push_back(w.text);  // --chown=, --chmod=, --link
            }
        }
        if (paths.size() < 2) return;
        paths.pop_back();  // the destination
        for (const std::string& source : paths) {
            if (source.find("://") != std::string::npos || starts_with(source, "git@")) return;  // fetched
            for (const char* archive :
                 {".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst"}) {
                if (ends_with(lower(source), archive)) return;  // ADD unpacks it: that is what ADD is for
            }
        }
        add(ins.line, "add-not-copy", "ADD of local " + paths.front() + ": use COPY");
    }

    void run_instruction(const Instruction& ins) {
        std::vector<Command> commands = dockerfile::run_commands(ins.args);
        // RUN --mount=... / --network=... flags come before the command.
        if (!commands.empty()) {
            Command& first = commands.front();
            while (!first.empty() && starts_with(first.front().text, "--"))
                first.erase(first.begin());
        }
        bool updated = false;
        bool lists_removed = false;
        int update_line = 0;  // where this RUN fetched package lists
        for (Command& command : commands) {
            bool inline_no_cache = false;
            bool inline_constraint = false;
            // Leading VAR=value, env, sudo, nohup and exec before the program itself.
            size_t i = 0;
            while (i < command.size()) {
                const std::string& w = command[i].text;
                if (is_assignment(w)) {
                    inline_no_cache |= starts_with(w, "PIP_NO_CACHE_DIR=");
                    inline_constraint |= starts_with(w, "PIP_CONSTRAINT=");
                } else if (w == "sudo") {
                    add(ins.line_of(command[i].offset), "sudo",
                        "sudo in RUN: build steps already run as root (or as USER); drop it");
                } else if (w != "env" && w != "nohup" && w != "exec" && !(i > 0 && w[0] == '-')) {
                    break;
                }
                ++i;
            }
            if (i >= command.size()) continue;
            const Command program(command.begin() + static_cast<long>(i), command.end());
            const std::string tool = basename(program[0].text);
            const int line = ins.line_of(program[0].offset);
            if (tool == "apt-get" || tool == "apt") {
                const bool updated_before = updated;
                apt(program, line, updated);
                if (updated && !updated_before) update_line = line;
            } else if (tool == "rm") {
                for (const Word& w : program) {
                    if (starts_with(w.text, "/var/lib/apt/lists")) lists_removed = true;
                }
            } else if (is_pip(program)) {
                pip(ins, program, inline_no_cache, inline_constraint);
            }
        }
        if (update_line != 0 && !lists_removed) {
            add(update_line, "apt-lists",
                "this RUN leaves /var/lib/apt/lists in the layer: end it with && rm -rf "
                "/var/lib/apt/lists/*");
        }
    }

    void apt(const Command& program, int line, bool& updated) {
        std::string sub;
        bool yes = false;
        bool no_recommends = false;
        for (size_t i = 1; i < program.size(); ++i) {
            const std::string& w = program[i].text;
            if (w == "--yes" || w == "--assume-yes" ||
                (w.size() > 1 && w[0] == '-' && w[1] != '-' && w.find('y') != std::string::npos)) {
                yes = true;
            } else if (w == "--no-install-recommends") {
                no_recommends = true;
            } else if (w[0] != '-' && sub.empty()) {
                sub = w;
            }
        }
        if (sub == "update") {
            updated = true;
        } else if (sub == "upgrade" || sub == "dist-upgrade" || sub == "full-upgrade") {
            add(line, "apt-upgrade",
                "apt-get " + sub +
                    " can replace the CUDA, cuDNN and NCCL libraries of the base image; "
                    "install only what you need");
        } else if (sub == "install") {
            if (!updated)
                add(line, "apt-no-update",
                    "apt-get install without apt-get update before it in this RUN: the package lists are "
                    "missing or stale (cached from an older layer)");
            if (!yes)
                add(line, "apt-no-yes", "apt-get install without -y stops at its question: the build fails");
            if (!no_recommends)
                add(line, "apt-recommends",
                    "apt-get install without --no-install-recommends pulls recommended packages too");
        }
    }

    static bool is_pip(const Command& program) {
        const std::string tool = basename(program[0].text);
        auto named = [](const std::string& word, const char* prefix) {
            return starts_with(word, prefix) &&
                   std::all_of(word.begin() + static_cast<long>(std::char_traits<char>::length(prefix)),
                               word.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; });
        };
        if (named(tool, "pip")) return true;
        return named(tool, "python") && program.size() > 2 && program[1].text == "-m" &&
               named(program[2].text, "pip");
    }

    void pip(const Instruction& ins, const Command& program, bool no_cache, bool constrained) {
        // pip options whose value is the next word (unless written --option=value).
        static const std::set<std::string> with_value = split_words(
            "-c --constraint -r --requirement -e --editable -i --index-url --extra-index-url -f --find-links "
            "-t --target --prefix --root --trusted-host --platform --python-version --implementation --abi "
            "--src --log --cache-dir --progress-bar --timeout --retries --proxy --global-option "
            "--config-settings -C --upgrade-strategy --only-binary --no-binary --report --exists-action "
            "--cert --client-cert --python");
        const size_t start = basename(program[0].text).rfind("python", 0) == 0 ? 3 : 1;
        std::string sub;
        bool requirements = false;
        bool no_deps = false;
        std::vector<const Word*> packages;
        for (size_t i = start; i < program.size(); ++i) {
            const std::string& w = program[i].text;
            if (w.size() > 1 && w[0] == '-') {
                const std::string name = w.substr(0, w.find('='));
                const bool attached = w.size() > 2 && w[1] != '-' && with_value.count(w.substr(0, 2)) != 0;
                const std::string option = attached ? w.substr(0, 2) : name;
                no_cache |= option == "--no-cache-dir";
                constrained |= option == "-c" || option == "--constraint";
                requirements |= option == "-r" || option == "--requirement";
                no_deps |= option == "--no-deps";
                if (with_value.count(option) != 0 && !attached && name == w)
                    ++i;  // its value is the next word
            } else if (sub.empty()) {
                sub = w;
            } else {
                packages.push_back(&program[i]);
            }
        }
        if (sub != "install") return;
        const int line = ins.line_of(program[0].offset);
        if (!no_cache && !stage_.pip_no_cache)
            add(line, "pip-cache", "pip install without --no-cache-dir: its wheel cache stays in the layer");
        if (stage_.ngc && !constrained && !stage_.pip_constraint && !no_deps &&
            (requirements || !packages.empty())) {
            add(line, "pip-unconstrained",
                "pip install without --constraint on an NGC base: a dependency can replace the image's "
                "torch; "
                "constrain it to the installed version (python -c 'import torch; print(\"torch==\" + "
                "torch.__version__)' > constraint.txt)");
        }
        for (const Word* package : packages) {
            const std::string& spec = package->text;
            if (spec.find('/') != std::string::npos || spec[0] == '.' || spec[0] == '$' ||
                ends_with(spec, ".whl") || ends_with(spec, ".zip") || ends_with(spec, ".tar.gz")) {
                continue;  // a path, URL or variable: nothing to pin
            }
            const size_t name_end =
                spec.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
            std::string name = lower(spec.substr(0, name_end));
            std::replace(name.begin(), name.end(), '_', '-');
            std::replace(name.begin(), name.end(), '.', '-');
            std::string rest = name_end == std::string::npos ? std::string() : spec.substr(name_end);
            if (starts_with(rest, "[")) rest = rest.substr(std::min(rest.size(), rest.find(']') + 1));
            const int package_line = ins.line_of(package->offset);
            const bool image_owned = name == "torch" || name == "torchvision" || name == "torchaudio" ||
                                     starts_with(name, "nvidia-nccl-");
            if (stage_.ngc && image_owned) {
                add(package_line, "pip-replaces-torch",
                    "pip installs " + name +
                        " over the NGC image's own, built for its CUDA and NCCL: remove " + spec +
                        " (seed 000: never let pip replace the NGC torch)");
            } else if (!starts_with(rest, "==") || rest.find_first_of("*,") != std::string::npos) {
                add(package_line, "pip-unpinned", spec + " is not pinned: write " + name + "==VERSION");
            }
        }
    }

    std::vector<LintFinding> findings_;
    Stage stage_;
    std::string current_alias_;
    std::map<std::string, Stage> stages_;  // by lower-case AS name
};

}  // namespace

const char* lint_severity_name(LintSeverity severity) {
    switch (severity) {
        case LintSeverity::kError:
            return "error";
        case LintSeverity::kWarning:
            return "warning";
        case LintSeverity::kInfo:
            return "info";
    }
    return "?";
}

const std::vector<LintRule>& dockerfile_lint_rules() {
    return kRules;
}

std::vector<LintFinding> lint_dockerfile(const std::string& text) {
    return Linter().run(text);
}

}  // namespace slipway::remote
