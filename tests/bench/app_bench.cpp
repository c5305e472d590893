// Benchmark of the monitor (offscreen): redraw time of a 1,000,000-point curve (QCustomPlot adaptive
// sampling on, and off for reference), re-smoothing it, ingesting a ~100 MB engine-style MLLOG log from
// open to fully plotted (parsed on the follow thread, appended on the GUI thread), and memory (RSS) at
// each stage; then the same log ingested into the run history (SQLite) and read back from it. Prints a table;
// a benchmark, not a timed test. Usage: app_bench [--log-mb N] [--points N]
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/follow_service.h"
#include "history/history_writer.h"
#include "history/run_history.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"

using slipway::app::FollowService;
using slipway::app::Metric;
using slipway::app::MetricSample;
using slipway::app::MonitorWidget;
using slipway::app::RunMetrics;

namespace {

// VmRSS / VmHWM of this process in MiB.
double proc_status_mib(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field) + 1)) / 1024.0;
    }
    return 0;
}

// A log opened in the tracker and read to its end.
struct Opened {
    slipway::Result<int> key;
    double
        longest_stall_ms;  // the GUI thread's longest stall meanwhile (a responsive window answers quickly)
};

// Opens `path` in `tracker` and turns the event loop until the whole log is read.
Opened open_until_read(slipway::app::RunTracker& tracker, const QString& path) {
    int loaded = 0;
    const QMetaObject::Connection done =
        QObject::connect(&tracker, &slipway::app::RunTracker::loaded, [&](int key) { loaded = key; });
    double longest_stall_ms = 0;
    QElapsedTimer gap;
    gap.start();
    slipway::Result<int> key = tracker.open_log(path);
    while (key.ok() && loaded == 0) {
        QApplication::processEvents(QEventLoop::AllEvents, 5);
        longest_stall_ms = std::max(longest_stall_ms, static_cast<double>(gap.nsecsElapsed()) / 1e6);
        gap.restart();
    }
    QObject::disconnect(done);
    return Opened{std::move(key), longest_stall_ms};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// An engine-like log: per logged step train_loss, lr, tokens_per_second (and grad_norm, which the
// monitor does not plot), an eval every 50 steps, progress text lines in between.
size_t write_log(const QString& path, size_t target_bytes, size_t* metric_points) {
    std::ofstream out(QFile::encodeName(path).toStdString(), std::ios::binary);
    char line[512];
    size_t bytes = 0;
    size_t points = 0;
    int64_t t = 1'700'000'000'000;
    for (long step = 1; bytes < target_bytes; ++step) {
        t += 350;
        const double loss = 2.0 + 6.0 / std::sqrt(static_cast<double>(step)) + 0.05 * std::sin(step * 0.7);
        const struct {
            const char* key;
            double value;
        } metrics[] = {{"train_loss", loss},
                       {"lr", 1e-4 * std::exp(-step * 1e-6)},
                       {"tokens_per_second", 12000.0 + step % 97},
                       {"grad_norm", 1.0 + 0.1 * std::cos(step)}};
        for (const auto& m : metrics) {
            const int n = std::snprintf(
                line, sizeof line,
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                "\"key\": \"%s\", \"value\": %.17g, \"metadata\": {\"file\": \"engine/train/trainer.cpp\", "
                "\"lineno\": 251, \"samples_count\": %ld, \"step_num\": %ld}}\n",
                static_cast<long long>(t), m.key, m.value, step * 8, step);
            out.write(line, n);
            bytes += static_cast<size_t>(n);
            if (std::string(m.key) != "grad_norm") ++points;
        }
        const int n =
            std::snprintf(line, sizeof line, "step %ld loss %.4f lr 1.0e-04 12000 tok/s\n", step, loss);
        out.write(line, n);
        bytes += static_cast<size_t>(n);
        if (step % 50 == 0) {
            const int e = std::snprintf(
                line, sizeof line,
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                "\"key\": \"eval_accuracy\", \"value\": %.17g, \"metadata\": {\"samples_count\": %ld, "
                "\"step_num\": %ld}}\n",
                static_cast<long long>(t), loss + 0.1, step * 8, step);
            out.write(line, e);
            bytes += static_cast<size_t>(e);
            ++points;
        }
    }
    *metric_points = points;
    return bytes;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    double log_mb = 100;
    int n_points = 1'000'000;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--log-mb") log_mb = std::stod(argv[++i]);
        if (std::string(argv[i]) == "--points") n_points = std::stoi(argv[++i]);
    }
    struct Row {
        std::string what;
        std::string value;
    };
    std::vector<Row> rows;
    char buf[160];
    auto add = [&](const std::string& what, const char* fmt, double v) {
        std::snprintf(buf, sizeof buf, fmt, v);
        rows.push_back({what, buf});
    };
    add("RSS at start (MiB)", "%.1f", proc_status_mib("VmRSS:"));

    // 1. Redraw of a 1,000,000-point noisy curve in a 1200x800 monitor.
    {
        FollowService follow;
        slipway::app::RunTracker tracker(nullptr, &follow, nullptr, {});
        MonitorWidget monitor(&tracker);
        monitor.resize(1200, 800);
        monitor.show();
        QApplication::processEvents();
        RunMetrics m;
        auto& loss = m.points(Metric::kTrainLoss);
        loss.reserve(static_cast<size_t>(n_points));
        for (int i = 0; i < n_points; ++i) {
            MetricSample s;
            s.samples = 8.0 * (i + 1);
            s.step = i + 1;
            // A real loss curve's step-to-step noise: +-0.3 pseudo-random around the trend.
            const double noise = static_cast<double>((i * 2654435761u) % 1000) / 1000.0 - 0.5;
            s.value = 2.0 + 6.0 / std::sqrt(1.0 + i) + 0.6 * noise;
            loss.push_back(s);
        }
        const double before = proc_status_mib("VmRSS:");
        QElapsedTimer t;
        t.start();
        const int key = tracker.show_curves("bench", std::move(m));
        monitor.set_smoothing(0.0);
        add("load 1M points into the plot (ms)", "%.1f", static_cast<double>(t.nsecsElapsed()) / 1e6);
        add("RSS added by 1M points (MiB)", "%.1f", proc_status_mib("VmRSS:") - before);
        auto* plot = monitor.plot(Metric::kTrainLoss);
        std::vector<double> adaptive;
        for (int i = 0; i < 11; ++i) {
            t.restart();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            adaptive.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        add("redraw 1M points, adaptive sampling (ms, median of 11)", "%.2f", median(adaptive));
        // Zoomed in to 1% of the run: the real points show.
        plot->xAxis->setRange(4e6 - 4e4, 4e6 + 4e4);
        std::vector<double> zoomed;
        for (int i = 0; i < 11; ++i) {
            t.restart();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            zoomed.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        add("redraw zoomed to 10,000 of them (ms, median of 11)", "%.2f", median(zoomed));
        plot->fit(true);
        t.restart();
        monitor.set_smoothing(0.9);
        add("re-smooth 1M points (EMA 0.9) (ms)", "%.1f", static_cast<double>(t.nsecsElapsed()) / 1e6);
        std::vector<double> both;
        for (int i = 0; i < 11; ++i) {
            t.restart();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            both.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        add("redraw 1M raw + 1M smoothed, adaptive (ms, median of 11)", "%.2f", median(both));
        monitor.set_smoothing(0.0);
        plot->raw_graph(key)->setAdaptiveSampling(false);
        std::vector<double> plain;
        for (int i = 0; i < 3; ++i) {
            t.restart();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            plain.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        add("redraw 1M points, adaptive sampling OFF (ms, median of 3)", "%.2f", median(plain));
    }

    // 2. Ingest a ~100 MB log: open -> every point plotted.
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("big_mllog.txt");
        size_t expected_points = 0;
        const size_t bytes = write_log(path, static_cast<size_t>(log_mb * 1024 * 1024), &expected_points);
        FollowService follow;
        slipway::app::RunTracker tracker(nullptr, &follow, nullptr, {});
        MonitorWidget monitor(&tracker);
        monitor.resize(1200, 800);
        monitor.show();
        QApplication::processEvents();
        const double before = proc_status_mib("VmRSS:");
        QElapsedTimer t;
        t.start();
        const Opened opened = open_until_read(tracker, path);
        const double longest_gap_ms = opened.longest_stall_ms;
        const auto& key = opened.key;
        for (auto* p : {monitor.plot(Metric::kTrainLoss)})
            p->replot(QCustomPlot::rpImmediateRefresh);
        const double seconds = static_cast<double>(t.nsecsElapsed()) / 1e9;
        const RunMetrics& m = monitor.run(*key)->metrics;
        add("log size (MB)", "%.1f", static_cast<double>(bytes) / 1e6);
        add("ingest open -> all plotted (s)", "%.2f", seconds);
        add("ingest throughput (MB/s)", "%.1f", static_cast<double>(bytes) / 1e6 / seconds);
        add("points plotted", "%.0f", static_cast<double>(m.total_points()));
        add("points expected", "%.0f", static_cast<double>(expected_points));
        add("longest GUI-thread stall during ingest (ms)", "%.1f", longest_gap_ms);
        add("RSS added by the ingested run (MiB)", "%.1f", proc_status_mib("VmRSS:") - before);
    }
    // 3. The same log ingested as the app does it, into the run history (every batch's points and offset
    //    written in one transaction), then the run read back from the history as a restarted app does.
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("big_mllog.txt");
        size_t expected_points = 0;
        const size_t bytes = write_log(path, static_cast<size_t>(log_mb * 1024 * 1024), &expected_points);
        const QByteArray db = dir.filePath("history.sqlite").toUtf8();
        auto history = slipway::app::RunHistory::open(db.constData());
        if (!history.ok()) {
            std::fprintf(stderr, "app_bench: %s\n", history.error().c_str());
            return 1;
        }
        FollowService follow;
        {
            slipway::app::RunTracker tracker(history->get(), &follow, nullptr, {});
            MonitorWidget monitor(&tracker);
            monitor.resize(1200, 800);
            monitor.show();
            QApplication::processEvents();
            QElapsedTimer t;
            t.start();
            const double longest_gap_ms = open_until_read(tracker, path).longest_stall_ms;
            (void)(*history)->writer().flush();
            const double seconds = static_cast<double>(t.nsecsElapsed()) / 1e9;
            add("ingest into the run history: open -> all stored (s)", "%.2f", seconds);
            add("ingest into the run history: throughput (MB/s)", "%.1f",
                static_cast<double>(bytes) / 1e6 / seconds);
            add("ingest into the run history: longest GUI-thread stall (ms)", "%.1f", longest_gap_ms);
        }
        const auto row = (*history)->find_opened_log(path.toUtf8().constData());
        double stored_points = -1;
        double read_ms = -1;
        if (row.ok()) {
            QElapsedTimer t;
            t.start();
            const auto stored = (*history)->load_metrics(*row);
            read_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
            if (stored.ok()) stored_points = static_cast<double>(stored->total_points());
        }
        add("run history: points stored", "%.0f", stored_points);
        add("run history: read the run back (ms)", "%.1f", read_ms);
        add("run history: file size (MB)", "%.1f",
            static_cast<double>(QFileInfo(QString::fromUtf8(db)).size() +
                                QFileInfo(QString::fromUtf8(db) + "-wal").size()) /
                1e6);
    }
    add("peak RSS (VmHWM, MiB)", "%.1f", proc_status_mib("VmHWM:"));

    size_t width = 0;
    for (const Row& r : rows)
        width = std::max(width, r.what.size());
    std::printf("%-*s  %s\n", static_cast<int>(width), "measure", "value");
    std::printf("%s  %s\n", std::string(width, '-').c_str(), "----------");
    for (const Row& r : rows)
        std::printf("%-*s  %s\n", static_cast<int>(width), r.what.c_str(), r.value.c_str());
    return 0;
}
