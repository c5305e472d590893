// The bridge between torch tensors and io::safetensors views: dtype mapping, zero-copy tensors over
// mapped bytes, writing a name -> tensor map, and shape text for error messages.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "contract/status.h"
#include "io/safetensors.h"

namespace slipway::model {

std::string shape_text(const std::vector<int64_t>& shape);  // "[4096, 32]"

Result<torch::ScalarType> torch_dtype(io::DType dtype);
Result<io::DType> io_dtype(torch::ScalarType dtype);

// A tensor over the bytes of `view` (no copy: valid while its file stays mapped; clone to keep it).
Result<torch::Tensor> tensor_of(const io::TensorView& view);

// Writes the tensors (each made contiguous on the CPU, dtype kept) as one safetensors file.
[[nodiscard]] Status write_tensors(const std::string& path,
                                   const std::map<std::string, torch::Tensor>& tensors,
                                   FileSystem& fs = default_file_system());

}  // namespace slipway::model
