// safetensors reader/writer of safetensors.h: mmap, header validation (length, JSON, dtype x shape =
// bytes, offsets contiguous and in bounds), and the index.json of sharded checkpoints.
#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "contract/json_text.h"
#include "contract/run_config.h"

namespace slipway::io {
namespace {

struct DTypeInfo {
    DType dtype;
    const char* name;
    size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "F32", 4}, {DType::kF16, "F16", 2},   {DType::kBF16, "BF16", 2}, {DType::kF64, "F64", 8},
    {DType::kI64, "I64", 8}, {DType::kI32, "I32", 4},   {DType::kI16, "I16", 2},   {DType::kI8, "I8", 1},
    {DType::kU8, "U8", 1},   {DType::kBool, "BOOL", 1},
};

}  // namespace

size_t dtype_size(DType dtype) {
    for (const DTypeInfo& d : kDTypes) {
        if (d.dtype == dtype) return d.size;
    }
    return 0;
}

const char* dtype_name(DType dtype) {
    for (const DTypeInfo& d : kDTypes) {
        if (d.dtype == dtype) return d.name;
    }
    return "?";
}

Result<DType> parse_dtype(const std::string& name) {
    for (const DTypeInfo& d : kDTypes) {
        if (name == d.name) return d.dtype;
    }
    return Status::Error("unsupported dtype \"" + name + "\"");
}

int64_t TensorView::numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

Result<std::shared_ptr<SafetensorsFile>> SafetensorsFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        ::close(fd);
        return Status::Error(path + ": cannot stat");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->path_ = path;
    if (size < 8) {
        ::close(fd);
        return Status::Error(path + ": not a safetensors file (" + std::to_string(size) + " bytes)");
    }
    void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapping == MAP_FAILED) return Status::Error(path + ": mmap failed: " + std::strerror(errno));
    file->mapping_ = mapping;
    file->mapped_bytes_ = size;
    const auto* bytes = static_cast<const uint8_t*>(mapping);

    uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i)
        header_size = (header_size << 8) | bytes[i];  // little-endian u64
    if (header_size > kMaxHeaderBytes) {
        return Status::Error(path + ": header of " + std::to_string(header_size) +
                             " bytes is over the 100 MB limit");
    }
    if (8 + header_size > size) {
        return Status::Error(path + ": header length " + std::to_string(header_size) +
                             " runs past the end of the file");
    }
    Result<nlohmann::json> parsed = parse_json_text(
        std::string_view(reinterpret_cast<const char*>(bytes + 8), header_size), path + ": header");
    if (!parsed.ok()) return parsed.status();
    const nlohmann::json& header = *parsed;
    if (!header.is_object()) return Status::Error(path + ": header must be a JSON object");
    const uint8_t* data = bytes + 8 + header_size;
    const uint64_t data_size = size - 8 - header_size;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object())
                return Status::Error(path + ": __metadata__ must be an object of strings");
            for (const auto& [k, v] : entry.items()) {
                if (!v.is_string()) return Status::Error(path + ": __metadata__." + k + " must be a string");
                file->metadata_[k] = v.get<std::string>();
            }
            continue;
        }
        const std::string where = path + ": tensor \"" + name + "\": ";
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets")) {
            return Status::Error(where + "needs dtype, shape and data_offsets");
        }
        TensorView view;
        if (!entry["dtype"].is_string()) return Status::Error(where + "dtype must be a string");
        Result<DType> dtype = parse_dtype(entry["dtype"].get<std::string>());
        if (!dtype.ok()) return Status::Error(where + dtype.error());
        view.dtype = *dtype;
        if (!entry["shape"].is_array()) return Status::Error(where + "shape must be a list");
        // The element count in bytes must fit the file, so a product that overflows is an error, not a
        // wrapped size that happens to match data_offsets.
        uint64_t numel = 1;
        for (const auto& d : entry["shape"]) {
            if (!d.is_number_unsigned())
                return Status::Error(where + "shape must hold non-negative integers");
            const uint64_t dim = d.get<uint64_t>();
            if (dim > data_size || __builtin_mul_overflow(numel, dim, &numel))
                return Status::Error(where + "shape " + entry["shape"].dump() + " is larger than the file");
            view.shape.push_back(static_cast<int64_t>(dim));
        }
        if (numel > data_size / dtype_size(view.dtype)) {
            return Status::Error(where + "shape " + entry["shape"].dump() + " is larger than the file");
        }
        const nlohmann::json& offsets = entry["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned()) {
            return Status::Error(where + "data_offsets must be [begin, end]");
        }
        const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
        if (begin > end || end > data_size) {
            return Status::Error(where + "data_offsets [" + std::to_string(begin) + ", " +
                                 std::to_string(end) + "] outside the " + std::to_string(data_size) +
                                 " data bytes");
        }
        if (numel * dtype_size(view.dtype) != end - begin) {
            return Status::Error(where + "dtype x shape is " +
                                 std::to_string(numel * dtype_size(view.dtype)) +
                                 " bytes but data_offsets span " + std::to_string(end - begin));
        }
        view.data = data + begin;
        view.nbytes = end - begin;
        ranges.emplace_back(begin, end);
        file->tensors_.emplace(name, std::move(view));
    }
    // The buffer must be covered exactly, without holes or overlaps (as the reference validator demands).
    std::sort(ranges.begin(), ranges.end());
    uint64_t expected = 0;
    for (const auto& [begin, end] : ranges) {
        if (begin != expected)
            return Status::Error(path + ": tensor data is not contiguous at byte " + std::to_string(begin));
        expected = end;
    }
    if (expected != data_size) {
        return Status::Error(path + ": " + std::to_string(data_size - expected) +
                             " trailing data bytes belong to no tensor");
    }
    return file;
}

SafetensorsFile::~SafetensorsFile() {
    if (mapping_ != nullptr) munmap(mapping_, mapped_bytes_);
}

Result<Checkpoint> Checkpoint::open_file(const std::string& path) {
    Result<std::shared_ptr<SafetensorsFile>> file = SafetensorsFile::open(path);
    if (!file.ok()) return file.status();
    Checkpoint checkpoint;
    checkpoint.tensors_ = (*file)->tensors();
    checkpoint.files_.push_back(*file);
    return checkpoint;
}

Result<Checkpoint> Checkpoint::open_folder(const std::string& folder) {
    namespace fs = std::filesystem;
    const fs::path index_path = fs::path(folder) / "model.safetensors.index.json";
    std::error_code ec;
    if (!fs::exists(index_path, ec)) {
        const fs::path single = fs::path(folder) / "model.safetensors";
        if (!fs::exists(single, ec))
            return Status::Error(folder + ": no model.safetensors or model.safetensors.index.json");
        return open_file(single.string());
    }
    Result<nlohmann::json> index = read_json_file(index_path.string());
    if (!index.ok()) return index.status();
    if (!index->contains("weight_map") || !(*index)["weight_map"].is_object()) {
        return Status::Error(index_path.string() + ": weight_map missing");
    }
    Checkpoint checkpoint;
    std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
    for (const auto& [name, shard] : (*index)["weight_map"].items()) {
        if (!shard.is_string())
            return Status::Error(index_path.string() + ": weight_map." + name + " must be a file name");
        const std::string shard_name = shard.get<std::string>();
        if (shard_name.find('/') != std::string::npos) {
            return Status::Error(index_path.string() + ": shard \"" + shard_name +
                                 "\" must be a file in the folder");
        }
        auto it = shards.find(shard_name);
        if (it == shards.end()) {
            Result<std::shared_ptr<SafetensorsFile>> file =
                SafetensorsFile::open((fs::path(folder) / shard_name).string());
            if (!file.ok()) return file.status();
            it = shards.emplace(shard_name, *file).first;
            checkpoint.files_.push_back(*file);
        }
        const auto tensor = it->second->tensors().find(name);
        if (tensor == it->second->tensors().end()) {
            return Status::Error(index_path.string() + ": " + name + " is not in " + shard_name +
                                 " as the index says");
        }
        checkpoint.tensors_.emplace(name, tensor->second);
    }
    return checkpoint;
}

Status write_safetensors(const std::string& path, const std::map<std::string, TensorView>& tensors,
                         const std::map<std::string, std::string>& metadata, FileSystem& fs) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
        if (static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype) != t.nbytes) {
            return Status::Error(path + ": tensor \"" + name + "\": shape and byte count disagree");
        }
        header[name] = {{"dtype", dtype_name(t.dtype)},
                        {"shape", t.shape},
                        {"data_offsets", {offset, offset + t.nbytes}}};
        offset += t.nbytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
    Result<AtomicFile> out = AtomicFile::create(path, {}, fs);
    if (!out.ok()) return out.status();
    char length[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i, n >>= 8)
        length[i] = static_cast<char>(n & 0xff);
    if (Status s = out->append(std::string_view(length, 8)); !s.ok()) return s;
    if (Status s = out->append(text); !s.ok()) return s;
    for (const auto& [name, t] : tensors) {
        if (Status s = out->append(std::string_view(reinterpret_cast<const char*>(t.data), t.nbytes));
            !s.ok())
            return s;
    }
    return out->commit();
}

void release_pages(const TensorView& view) {
    if (view.data == nullptr || view.nbytes == 0) return;
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(view.data) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(view.data) + view.nbytes;
    // Read-only private file pages: dropping them loses nothing, neighbours' pages included.
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace slipway::io
