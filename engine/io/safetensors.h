// safetensors files without torch: a validating memory-mapped reader, a writer (header padded to 8
// bytes, __metadata__ {"format": "pt"}), and sharded checkpoints through model.safetensors.index.json.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/status.h"

namespace slipway::io {

enum class DType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "F32", "BF16", ...
Result<DType> parse_dtype(const std::string& name);

// A tensor inside a mapped file (or a buffer for writing): raw little-endian bytes, row-major.
struct TensorView {
    DType dtype = DType::kF32;
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t numel() const;
};

// One .safetensors file, memory-mapped read-only. Tensors stay valid while the file object lives.
class SafetensorsFile {
public:
    static constexpr uint64_t kMaxHeaderBytes = 100u << 20;

    // Validates the whole header; errors name the file and the tensor.
    static Result<std::shared_ptr<SafetensorsFile>> open(const std::string& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::map<std::string, TensorView>& tensors() const { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    const std::string& path() const { return path_; }

private:
    SafetensorsFile() = default;
    std::string path_;
    void* mapping_ = nullptr;
    size_t mapped_bytes_ = 0;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

// Every tensor of a checkpoint folder: model.safetensors, or the shards listed by
// model.safetensors.index.json (each tensor must be in the shard the index names).
class Checkpoint {
public:
    static Result<Checkpoint> open_folder(const std::string& folder);
    static Result<Checkpoint> open_file(const std::string& path);
    const std::map<std::string, TensorView>& tensors() const { return tensors_; }

private:
    std::vector<std::shared_ptr<SafetensorsFile>> files_;
    std::map<std::string, TensorView> tensors_;
};

// Drops the pages of a mapped tensor from this process's resident memory once it has been read (a QLoRA
// weight, quantized): the file stays mapped and a later read faults them in again from the page cache.
void release_pages(const TensorView& view);

// The __metadata__ torch's safetensors writer puts in every file.
inline const std::map<std::string, std::string> kTorchMetadata = {{"format", "pt"}};

// Writes tensors (sorted by name) to `path` atomically and durably (write_file_atomically's way), streamed.
[[nodiscard]] Status write_safetensors(const std::string& path,
                                       const std::map<std::string, TensorView>& tensors,
                                       const std::map<std::string, std::string>& metadata = kTorchMetadata,
                                       FileSystem& fs = default_file_system());

}  // namespace slipway::io
