// Field numbers are tensorboard/compat/proto/{event,summary,tensor,tensor_shape}.proto and
// tensorboard/plugins/hparams/{api,plugin_data}.proto; google.protobuf.Value is struct.proto.
#include "track/tensorboard_events.h"

#include <cstring>

#include "track/crc32c.h"
#include "track/proto_wire.h"

namespace slipway::track {
namespace {

// Event
constexpr int kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
// Summary and Summary.Value
constexpr int kSummaryValue = 1;
constexpr int kValueTag = 1, kValueSimpleValue = 2, kValueTensor = 8, kValueMetadata = 9;
// SummaryMetadata, PluginData
constexpr int kMetadataPluginData = 1, kPluginName = 1, kPluginContent = 2;
// TensorProto, TensorShapeProto
constexpr int kTensorDtype = 1, kTensorShape = 2, kTensorStringVal = 8, kShapeDim = 2, kDimSize = 1;
constexpr int kDtString = 7;
// HParamsPluginData and what it holds
constexpr int kPluginDataVersion = 1, kPluginDataExperiment = 2, kPluginDataSessionStart = 3,
              kPluginDataSessionEnd = 4;
constexpr int kExperimentHParamInfos = 4, kExperimentMetricInfos = 5;
constexpr int kHParamInfoName = 1, kHParamInfoType = 4;
constexpr int kMetricInfoName = 1, kMetricNameTag = 2;
constexpr int kSessionStartHParams = 1, kSessionStartTime = 5;
constexpr int kSessionEndStatus = 1, kSessionEndTime = 2;
constexpr int kMapKey = 1, kMapValue = 2;
constexpr int kStructNumber = 2, kStructString = 3, kStructBool = 4;
// hparams enums: DataType and Status
constexpr int kTypeString = 1, kTypeBool = 2, kTypeFloat64 = 3;
constexpr int kStatusSuccess = 1, kStatusFailure = 2;

constexpr std::string_view kHParamsPlugin = "hparams";

void put_u32(std::string& out, uint32_t v) {
    char raw[4];
    std::memcpy(raw, &v, 4);
    out.append(raw, 4);
}

std::string event(double wall_time, int64_t step, const ProtoMessage& summary) {
    ProtoMessage e;
    e.float64(kEventWallTime, wall_time);
    if (step != 0) e.int64(kEventStep, step);
    e.message(kEventSummary, summary);
    return e.serialized();
}

ProtoMessage plugin_metadata(std::string_view plugin, std::string_view content) {
    ProtoMessage data;
    data.bytes(kPluginName, plugin);
    if (!content.empty()) data.bytes(kPluginContent, content);
    return ProtoMessage().message(kMetadataPluginData, data);
}

std::string hparams_event(double wall_time, std::string_view tag, int plugin_data_field,
                          const ProtoMessage& part) {
    ProtoMessage content;
    content.varint(kPluginDataVersion, 0);  // SummaryWriter's PLUGIN_DATA_VERSION
    content.message(plugin_data_field, part);
    ProtoMessage value;
    value.bytes(kValueTag, tag)
        .message(kValueMetadata, plugin_metadata(kHParamsPlugin, content.serialized()));
    return event(wall_time, 0, ProtoMessage().message(kSummaryValue, value));
}

ProtoMessage struct_value(const HParamValue& value) {
    ProtoMessage v;
    if (const double* number = std::get_if<double>(&value)) {
        v.float64(kStructNumber, *number);
    } else if (const bool* flag = std::get_if<bool>(&value)) {
        v.boolean(kStructBool, *flag);
    } else {
        v.bytes(kStructString, std::get<std::string>(value));
    }
    return v;
}

int data_type(const HParamValue& value) {
    if (std::holds_alternative<double>(value)) return kTypeFloat64;
    if (std::holds_alternative<bool>(value)) return kTypeBool;
    return kTypeString;
}

}  // namespace

std::string tfrecord(std::string_view data) {
    std::string out;
    out.reserve(data.size() + 16);
    const uint64_t length = data.size();
    char raw[8];
    std::memcpy(raw, &length, 8);
    out.append(raw, 8);
    put_u32(out, masked_crc32c(std::string_view(raw, 8)));
    out.append(data);
    put_u32(out, masked_crc32c(data));
    return out;
}

std::string file_version_event(double wall_time) {
    ProtoMessage e;
    e.float64(kEventWallTime, wall_time).bytes(kEventFileVersion, "brain.Event:2");
    return e.serialized();
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
    ProtoMessage v;
    v.bytes(kValueTag, tag).float32(kValueSimpleValue, value);
    return event(wall_time, step, ProtoMessage().message(kSummaryValue, v));
}

std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text) {
    ProtoMessage shape;
    shape.message(kShapeDim, ProtoMessage().int64(kDimSize, 1));
    ProtoMessage tensor;
    tensor.varint(kTensorDtype, kDtString).message(kTensorShape, shape).bytes(kTensorStringVal, text);
    ProtoMessage v;
    v.bytes(kValueTag, std::string(tag) + "/text_summary")
        .message(kValueMetadata, plugin_metadata("text", ""))
        .message(kValueTensor, tensor);
    return event(wall_time, step, ProtoMessage().message(kSummaryValue, v));
}

std::string hparams_experiment_event(double wall_time, const HParams& hparams,
                                     const std::vector<std::string>& metric_tags) {
    ProtoMessage experiment;
    for (const auto& [name, value] : hparams)
        experiment.message(
            kExperimentHParamInfos,
            ProtoMessage().bytes(kHParamInfoName, name).varint(kHParamInfoType, data_type(value)));
    for (const std::string& tag : metric_tags)
        experiment.message(
            kExperimentMetricInfos,
            ProtoMessage().message(kMetricInfoName, ProtoMessage().bytes(kMetricNameTag, tag)));
    return hparams_event(wall_time, "_hparams_/experiment", kPluginDataExperiment, experiment);
}

std::string hparams_session_start_event(double wall_time, const HParams& hparams) {
    ProtoMessage start;
    for (const auto& [name, value] : hparams)
        start.message(kSessionStartHParams,
                      ProtoMessage().bytes(kMapKey, name).message(kMapValue, struct_value(value)));
    start.float64(kSessionStartTime, wall_time);
    return hparams_event(wall_time, "_hparams_/session_start_info", kPluginDataSessionStart, start);
}

std::string hparams_session_end_event(double wall_time, bool succeeded) {
    ProtoMessage end;
    end.varint(kSessionEndStatus, succeeded ? kStatusSuccess : kStatusFailure)
        .float64(kSessionEndTime, wall_time);
    return hparams_event(wall_time, "_hparams_/session_end_info", kPluginDataSessionEnd, end);
}

}  // namespace slipway::track
