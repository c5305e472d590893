// Fuzz harness: safetensors files (header, sizes and offsets) alone and as a sharded model folder with
// model.safetensors.index.json. Input: a .safetensors file, optionally "\n----\n" the index JSON and
// "\n----\n" a second shard; the index may name model-00001-of-00002.safetensors (the first part) and
// model-00002-of-00002.safetensors (the third).
#include <filesystem>
#include <string>

#include "fuzz_common.h"
#include "io/safetensors.h"

using namespace slipway;

namespace {

// Reads every byte the parser promised is there: ASan reports any that is not.
void touch(const std::map<std::string, io::TensorView>& tensors) {
    volatile uint8_t sink = 0;
    for (const auto& [name, view] : tensors) {
        FUZZ_CHECK(view.nbytes == static_cast<size_t>(view.numel()) * io::dtype_size(view.dtype), name);
        if (view.nbytes > 0) sink = sink + view.data[0] + view.data[view.nbytes - 1];
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
    namespace fs = std::filesystem;

    const std::string single = fuzz::write_scratch("single.safetensors", parts[0]);
    if (auto file = io::SafetensorsFile::open(single); file.ok()) {
        touch((*file)->tensors());
    } else {
        FUZZ_CHECK(fuzz::names(file.error(), single), file.error());
    }

    if (parts.size() < 2) return 0;
    const std::string folder = fuzz::scratch_dir() + "/model";
    fs::remove_all(folder);
    fs::create_directories(folder);
    fuzz::write_scratch("model/model-00001-of-00002.safetensors", parts[0]);
    fuzz::write_scratch("model/model.safetensors.index.json", parts[1]);
    if (parts.size() > 2) fuzz::write_scratch("model/model-00002-of-00002.safetensors", parts[2]);
    if (auto checkpoint = io::Checkpoint::open_folder(folder); checkpoint.ok()) {
        touch(checkpoint->tensors());
    } else {
        FUZZ_CHECK(fuzz::names(checkpoint.error(), folder), checkpoint.error());
    }
    return 0;
}
