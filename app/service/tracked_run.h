// A run the app knows while it is open: what the pages draw (name, where, state, curves) and what following
// it needs (its log, its job, its follow). Qt-free: the run registry (run_registry.h) holds them, the GUI's
// RunTracker wires them to follows, sessions and timers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run_metrics.h"
#include "core/run_state.h"
#include "core/run_watch.h"
#include "remote/deploy/job_nodes.h"
#include "service/job_watch.h"
#include "service/orphaned_run.h"
#include "service/run_store.h"

namespace slipway::app {

// Its log is a file on this machine, followed by the app's file follower (else by its cluster's session).
bool follows_local_file(RunKind source);

struct TrackedRun {
    int key = 0;
    // What it is followed as: kLocal only for an engine this app runs (an engine another process runs is
    // followed as its log file, kLogFile), kClusterJob for a Slurm job.
    RunKind source = RunKind::kLogFile;
    std::string name;
    std::string profile;  // cluster profile; kLocalCluster; kOpenedLogCluster for files
    RunState state = RunState::kSubmitting;
    std::string state_detail;  // node list, pending reason, exit code, run_stop status
    std::string slurm_state;   // Slurm's last word; empty for runs Slurm does not run
    std::string job_id;        // Slurm job id, or the local engine's pid
    std::string run_id;        // Slipway's run id of a cluster submission (what `slipway status` lists)
    std::string log_path;
    int64_t store_id = 0;  // the run's row; 0: not stored
    RunMetrics metrics;
    RunWatch watch;
    int64_t bad_lines = 0;
    uint64_t log_offset = 0;  // bytes of the log folded in so far
    bool live = false;        // being followed: alerts and stall checks apply
    bool loading = false;     // an opened file still being read
    bool cancellable = false;
    // A run on This computer that another process runs (`slipway run`, another window): its row, which that
    // process writes, says its state; the app follows its log and never writes its state.
    bool state_from_store = false;
    OrphanedRunCheck orphan_check;  // whether that process died without storing the end

    // Following bookkeeping (the tracker's; shown for tests).
    int follow_id = 0;            // the file follower's id (local files) or the session's follow id; 0: none
    int submit_request = 0;       // the session's submit request while it is under way
    JobWatch job_watch;           // when Slurm's ended-looking word is the run's end (not a requeue)
    std::string last_poll_error;  // shown once, not at every poll
    // Slurm's states of the nodes of a job running on several nodes (empty otherwise, and once it stops).
    std::vector<remote::NodeState> node_states;
};

}  // namespace slipway::app
