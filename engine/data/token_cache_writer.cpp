// The temporary-folder-and-rename token cache writer of token_cache_writer.h.
#include "data/token_cache_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "data/token_cache.h"

namespace fs = std::filesystem;

namespace slipway::data {
namespace {

struct Output {
    std::string path;
    std::unique_ptr<WritableFile> file;
};

Status open_output(FileSystem& fs, const fs::path& path, Output& out) {
    out.path = path.string();
    Result<std::unique_ptr<WritableFile>> file = fs.create_file(out.path, 0666);
    if (!file.ok()) return file.status();
    out.file = std::move(*file);
    return Status::Ok();
}

Status write_all(Output& out, const void* data, size_t bytes) {
    if (bytes == 0) return Status::Ok();
    return out.file->append(std::string_view(static_cast<const char*>(data), bytes));
}

// Syncs and closes; the first error wins.
Status close_output(Output& out) {
    if (!out.file) return Status::Ok();
    std::unique_ptr<WritableFile> file = std::move(out.file);
    const Status synced = file->sync();
    const Status closed = file->close();
    return synced.ok() ? closed : synced;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
    std::string host(name);
    for (char& c : host) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    }
    return host;
}

}  // namespace

struct TokenCacheWriter::Impl {
    FileSystem* file_system = nullptr;
    fs::path temporary;
    fs::path final_path;
    Output outputs[4];  // train.tokens, train.blocks, validation.tokens, validation.blocks
    bool committed = false;

    Output& tokens(Split s) { return outputs[2 * static_cast<int>(s)]; }
    Output& blocks(Split s) { return outputs[2 * static_cast<int>(s) + 1]; }

    ~Impl() {
        for (Output& out : outputs)
            out.file.reset();
        if (!committed) (void)file_system->remove_all(temporary.string());
    }
};

TokenCacheWriter::TokenCacheWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TokenCacheWriter::TokenCacheWriter(TokenCacheWriter&&) noexcept = default;
TokenCacheWriter& TokenCacheWriter::operator=(TokenCacheWriter&&) noexcept = default;
TokenCacheWriter::~TokenCacheWriter() = default;

std::string temporary_suffix() {
    return ".tmp." + host_name() + "." + std::to_string(getpid());
}

Result<TokenCacheWriter> TokenCacheWriter::create(const std::string& cache_dir, const std::string& key,
                                                  FileSystem& file_system) {
    auto impl = std::make_unique<Impl>();
    impl->file_system = &file_system;
    impl->final_path = fs::path(cache_dir) / key;
    impl->temporary = fs::path(cache_dir) / (key + temporary_suffix());
    std::error_code ec;
    fs::remove_all(impl->temporary, ec);  // left by an earlier process with our pid
    if (!fs::create_directory(impl->temporary, ec)) {
        return Status::Error(impl->temporary.string() + ": cannot create folder: " +
                             (ec ? ec.message() : std::string("already exists")));
    }
    for (const Split split : {Split::kTrain, Split::kValidation}) {
        if (Status s =
                open_output(file_system, impl->temporary / tokens_file_name(split), impl->tokens(split));
            !s.ok())
            return s;
        if (Status s =
                open_output(file_system, impl->temporary / blocks_file_name(split), impl->blocks(split));
            !s.ok())
            return s;
    }
    return TokenCacheWriter(std::move(impl));
}

std::string TokenCacheWriter::temporary_path() const {
    return impl_->temporary.string();
}

Status TokenCacheWriter::append_tokens(Split split, const std::vector<uint32_t>& tokens) {
    return write_all(impl_->tokens(split), tokens.data(), tokens.size() * sizeof(uint32_t));
}

Status TokenCacheWriter::append_blocks(Split split, const std::vector<uint64_t>& offsets) {
    return write_all(impl_->blocks(split), offsets.data(), offsets.size() * sizeof(uint64_t));
}

Result<std::string> TokenCacheWriter::commit(const CacheMeta& meta) {
    Impl& m = *impl_;
    for (Output& out : m.outputs) {
        if (Status s = close_output(out); !s.ok()) return s;
    }
    Output meta_out;
    if (Status s = open_output(*m.file_system, m.temporary / kTokenCacheMetaFile, meta_out); !s.ok())
        return s;
    const std::string text = meta_to_json(meta).dump(2) + "\n";
    Status written = write_all(meta_out, text.data(), text.size());
    Status closed = close_output(meta_out);
    if (!written.ok()) return written;
    if (!closed.ok()) return closed;
    if (Status s = m.file_system->sync_dir(m.temporary.string()); !s.ok()) return s;

    const std::string final_path = m.final_path.string();
    for (int attempt = 0; attempt < 2; ++attempt) {
        const Status renamed = m.file_system->rename(m.temporary.string(), final_path);
        if (renamed.ok()) {
            m.committed = true;
            if (Status s = m.file_system->sync_dir(m.final_path.parent_path().string()); !s.ok()) return s;
            return final_path;
        }
        // rename(2) does not replace a non-empty folder: none there means another cause.
        std::error_code ec;
        if (!fs::exists(m.final_path, ec)) return renamed;
        // Another process committed this key first: keep its cache if complete, else replace it.
        if (TokenCache::open(final_path).ok()) return final_path;  // ours is removed by ~Impl
        if (Status s = m.file_system->remove_all(final_path); !s.ok()) return s;
    }
    return Status::Error(final_path + ": cannot replace the incomplete cache folder there");
}

size_t remove_stale_temporaries(const std::string& cache_dir) {
    const std::string marker = ".tmp." + host_name() + ".";
    size_t removed = 0;
    std::error_code ec;
    for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const size_t at = name.rfind(marker);
        if (at == std::string::npos || !it->is_directory(ec)) continue;
        const std::string pid_text = name.substr(at + marker.size());
        if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
        const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
        if (pid <= 0 || pid == getpid()) continue;
        if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running (or not ours)
        std::error_code remove_error;
        if (fs::remove_all(it->path(), remove_error) > 0 && !remove_error) ++removed;
    }
    return removed;
}

}  // namespace slipway::data
