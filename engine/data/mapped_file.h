// A read-only memory map of a whole file (empty files map to nothing), released when destroyed.
#pragma once

#include <cstddef>
#include <string>

#include "contract/status.h"

namespace slipway::data {

class MappedFile {
public:
    // Errors name the file.
    static Result<MappedFile> open(const std::string& path);

    MappedFile() = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const void* data() const { return data_; }
    size_t size() const { return size_; }

private:
    void release();
    void* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace slipway::data
