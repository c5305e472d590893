// mmap-based MappedFile of mapped_file.h.
#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace slipway::data {

Result<MappedFile> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::Error(path + ": cannot open file: " + std::strerror(errno));
    struct stat info {};
    if (fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        return Status::Error(path + ": cannot stat: " + std::strerror(error));
    }
    MappedFile file;
    file.size_ = static_cast<size_t>(info.st_size);
    if (file.size_ > 0) {
        void* data = mmap(nullptr, file.size_, PROT_READ, MAP_SHARED, fd, 0);
        if (data == MAP_FAILED) {
            const int error = errno;
            ::close(fd);
            return Status::Error(path + ": cannot map: " + std::strerror(error));
        }
        file.data_ = data;
    }
    ::close(fd);  // the mapping stays valid
    return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

MappedFile::~MappedFile() {
    release();
}

void MappedFile::release() {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace slipway::data
