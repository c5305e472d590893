// Fuzz harness: the doctor job's output as the cluster prints it (tagged SLIPWAY-DOCTOR lines among
// Slurm's and the shell's own), judged into a report that is then printed and written as JSON.
#include <string>

#include "fuzz_common.h"
#include "remote/slurm/doctor_report.h"

using namespace slipway;
using namespace slipway::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string out(fuzz::as_text(data, size));
    DoctorJudgement judgement;
    judgement.expected_nodes = {"node1", "node2"};
    judgement.gpus_per_node = size > 0 ? data[0] % 9 : 0;
    const DoctorReport report = judge_doctor_output(out, judgement);
    (void)format_report(report);
    (void)report_to_json(report).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    (void)report.bad_nodes();
    return 0;
}
