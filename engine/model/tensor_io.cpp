// tensor_io.h: dtype tables and the two directions between torch tensors and safetensors bytes.
#include "model/tensor_io.h"

#include <torch/torch.h>

namespace slipway::model {
namespace {

constexpr std::pair<io::DType, torch::ScalarType> kDTypes[] = {
    {io::DType::kF32, torch::kFloat32}, {io::DType::kBF16, torch::kBFloat16},
    {io::DType::kF16, torch::kFloat16}, {io::DType::kF64, torch::kFloat64},
    {io::DType::kU8, torch::kUInt8},
};

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

Result<torch::ScalarType> torch_dtype(io::DType dtype) {
    for (const auto& [io_type, torch_type] : kDTypes) {
        if (io_type == dtype) return torch_type;
    }
    return Status::Error(std::string("dtype ") + io::dtype_name(dtype) + " is not supported here");
}

Result<io::DType> io_dtype(torch::ScalarType dtype) {
    for (const auto& [io_type, torch_type] : kDTypes) {
        if (torch_type == dtype) return io_type;
    }
    return Status::Error(std::string("torch dtype ") + c10::toString(dtype) +
                         " has no safetensors dtype here");
}

Result<torch::Tensor> tensor_of(const io::TensorView& view) {
    Result<torch::ScalarType> dtype = torch_dtype(view.dtype);
    if (!dtype.ok()) return dtype.status();
    return torch::from_blob(const_cast<uint8_t*>(view.data), view.shape,
                            torch::TensorOptions().dtype(*dtype));
}

Status write_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                     FileSystem& fs) {
    std::vector<torch::Tensor> keep_alive;  // the views below point into these
    std::map<std::string, io::TensorView> views;
    for (const auto& [name, tensor] : tensors) {
        torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
        Result<io::DType> dtype = io_dtype(t.scalar_type());
        if (!dtype.ok()) return Status::Error(path + ": \"" + name + "\": " + dtype.error());
        views[name] = io::TensorView{*dtype, t.sizes().vec(), static_cast<const uint8_t*>(t.data_ptr()),
                                     static_cast<size_t>(t.numel()) * t.element_size()};
        keep_alive.push_back(std::move(t));
    }
    return io::write_safetensors(path, views, io::kTorchMetadata, fs);
}

}  // namespace slipway::model
