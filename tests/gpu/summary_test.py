"""tests/gpu/summary.py on fake work folders, no GPU needed: a run whose checks exited 0 but compared nothing,
ran no GoogleTest test or wrote no result.json must FAIL; a good run must PASS; a step run.sh skipped for the
budget is recorded as SKIP with its reason; the exit codes keep run.sh's contract (0, 1, 77) and the summary
files stay under 1 MB. Registered in ctest as gpu_suite_verdicts (label contract).
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summary  # noqa: E402

GPU_ENV = {"torch": "2.11.0+cu130", "transformers": "5.17.0", "peft": "0.21.0", "python": "3.12.3",
           "gpu": "NVIDIA H100 80GB HBM3"}
CPU_ENV = dict(GPU_ENV, gpu=None, transformers=None, peft=None)
# What GoogleTest 1.12 does with a flag it does not know: its help, exit 0, no test run.
GTEST_HELP = ("This program contains tests written using Google Test. You can use the\n"
              "following command line flags to control its behavior:\n\nTest Selection:\n")


def gtest_report(*results):
    """A --gtest_output=json report with one test per result: COMPLETED, SKIPPED or FAILED."""
    tests = []
    for i, result in enumerate(results):
        test = {"name": f"Gpu{i}", "status": "RUN", "result": "SKIPPED" if result == "SKIPPED" else "COMPLETED",
                "classname": "Nf4Weight"}
        if result == "FAILED":
            test["failures"] = [{"failure": "qlora_test.cpp:70\nExpected equality", "type": ""}]
        tests.append(test)
    return {"tests": len(tests), "failures": results.count("FAILED"), "name": "AllTests",
            "testsuites": [{"name": "Nf4Weight", "tests": len(tests), "testsuite": tests}] if tests else []}


class Run:
    """A fake work folder as run.sh leaves it."""

    def __init__(self, env=GPU_ENV):
        self.work = tempfile.mkdtemp(prefix="gpu-work-")
        self.results = os.path.join(self.work, "results")
        with open(os.path.join(self.work, "env.json"), "w") as f:
            json.dump(env, f)
        self.step("build", 0, seconds=65, expected=72, log="[312/312] Linking CXX executable bin/slipway-engine\n")

    def step(self, name, code, seconds=1, expected=10, log="", result=None, gtest=None, reason=""):
        """A ledger line; code None for a skipped step. result: result.json's object; gtest: gtest.json's."""
        with open(os.path.join(self.work, "checks.tsv"), "a") as f:
            f.write(f"{name}\t{'-' if code is None else code}\t{seconds}\t{expected}\t{reason}\n")
        if code is None:
            return
        with open(os.path.join(self.work, name + ".log"), "w") as f:
            f.write(log)
        os.makedirs(os.path.join(self.work, name), exist_ok=True)
        if result is not None:
            with open(os.path.join(self.work, name, "result.json"), "w") as f:
                json.dump(result, f)
        if gtest is not None:
            with open(os.path.join(self.work, name, "gtest.json"), "w") as f:
                json.dump(gtest, f)

    def summarize(self, budget=540, elapsed=400):
        s, code = summary.summarize(self.work, self.results, budget=budget, elapsed=elapsed)
        with open(os.path.join(self.results, "summary.json")) as f:
            self.assertions_on_files(json.load(f), s)
        return s, code, {c["name"]: c for c in s["checks"]}

    def assertions_on_files(self, written, s):
        assert written["verdict"] == s["verdict"] and written["exit"] == s["exit"]
        for name in ("summary.json", "summary.md"):
            assert os.path.getsize(os.path.join(self.results, name)) < summary.LIMIT, name

    def cleanup(self):
        shutil.rmtree(self.work, ignore_errors=True)


def passed(compared, **figures):
    return {"pass": True, "failures": [], "figures": dict(figures, compared=compared)}


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.run_ = Run()
        self.addCleanup(self.run_.cleanup)

    def test_checks_that_ran_nothing_fail(self):
        r = self.run_
        # Exit 0 everywhere, yet nothing was compared.
        r.step("score", 0, log="PASS\n", result=passed(0, **{"llama-fp32": 0.0}))
        r.step("lora", 0, log="PASS\n")  # no result.json
        r.step("perf", 0, log="PASS\n", result={"pass": True, "failures": [], "figures": {}})  # no count
        r.step("nf4", 0, log=GTEST_HELP)  # GoogleTest 1.12 and --gtest_fail_if_no_test_run
        r.step("nccl", 0, log="[  PASSED  ] 0 tests.\n", gtest=gtest_report())  # the filter matched nothing
        r.step("resume", 0, log="", gtest=gtest_report("SKIPPED"))  # every test skipped
        r.step("batches", 0, log="[==========] 0 tests from 0 test suites ran.\n[  PASSED  ] 0 tests.\n")
        s, code, checks = r.summarize()
        self.assertEqual(code, 1)
        self.assertEqual(s["verdict"], "FAIL")
        for name, check in checks.items():
            self.assertEqual(check["verdict"], "FAIL", name)
        self.assertIn("compared nothing", checks["score"]["reason"])
        self.assertIn("compared nothing", checks["perf"]["reason"])
        self.assertIn("ran no test", checks["lora"]["reason"])
        self.assertIn("ran no test", checks["nf4"]["reason"])
        self.assertIn("ran no test", checks["nccl"]["reason"])
        self.assertIn("1 skipped", checks["resume"]["reason"])
        self.assertIn("ran no test", checks["batches"]["reason"])
        self.assertTrue(os.path.exists(os.path.join(r.results, "logs", "score.log")))
        self.assertLessEqual(len(os.listdir(os.path.join(r.results, "logs"))), summary.MAX_LOGS)
        with open(os.path.join(r.results, "summary.md")) as f:
            md = f.read()
        self.assertIn("| nf4 | FAIL |", md)

    def test_good_run_passes(self):
        r = self.run_
        r.step("score", 0, seconds=44, expected=44, log="PASS\n", result=passed(50, **{"llama-fp32": 2e-7}))
        r.step("lora", 0, seconds=41, expected=42, log="PASS\n", result=passed(80, curve_fp32_max_rel_diff=1e-5))
        r.step("perf", 0, seconds=97, expected=98, log="PASS\n",
               result=passed(3, engine={"tokens_per_second": 41000.0, "mfu_4n": 0.41}))
        r.step("nf4", 0, log="[==========] 1 test from 1 test suite ran. (40 ms total)\n[  PASSED  ] 1 test.\n",
               gtest=gtest_report("COMPLETED"))
        r.step("resume", 0, log="PASS\n", result=passed(14, bitwise=False))
        s, code, checks = r.summarize(budget=540, elapsed=300)
        self.assertEqual((code, s["verdict"]), (0, "PASS"), s)
        self.assertEqual({c["verdict"] for c in checks.values()}, {"PASS"})
        self.assertEqual(checks["score"]["compared"], 50)
        self.assertEqual(checks["nf4"]["compared"], 1)
        self.assertEqual(checks["perf"]["figures"]["engine"]["tokens_per_second"], 41000.0)
        self.assertEqual(checks["lora"]["seconds"], 41)
        self.assertEqual(s["environment"]["torch"], "2.11.0+cu130")
        self.assertEqual(s["environment"]["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertEqual((s["budget_s"], s["elapsed_s"], s["budget_left_s"]), (540, 300, 240))
        self.assertEqual(s["build"]["verdict"], "PASS")
        self.assertFalse(os.path.exists(os.path.join(r.results, "logs")))  # nothing failed
        with open(os.path.join(r.results, "summary.md")) as f:
            md = f.read()
        self.assertIn("| score | PASS | 44 (44) | 50 |", md)
        self.assertIn("transformers 5.17.0", md)

    def test_budget_skip_is_recorded(self):
        r = self.run_
        r.step("score", 0, log="PASS\n", result=passed(50))
        r.step("perf", None, expected=98, reason="budget: needs ~98 s, 20 s left")
        r.step("nf4", None, reason="built without CUDA: ATen ops dequantize")
        s, code, checks = r.summarize()
        self.assertEqual(code, 0)
        self.assertEqual(checks["perf"]["verdict"], "SKIP")
        self.assertEqual(checks["perf"]["reason"], "budget: needs ~98 s, 20 s left")
        self.assertEqual(checks["nf4"]["verdict"], "SKIP")
        with open(os.path.join(r.results, "summary.md")) as f:
            self.assertIn("| perf | SKIP | - (98) | - | budget: needs ~98 s, 20 s left |", f.read())

    def test_only_skips_is_no_pass(self):
        r = self.run_
        r.step("score", None, reason="budget: needs ~44 s, 3 s left")
        _, code, _ = r.summarize()
        self.assertEqual(code, 1)

    def test_exit_code_and_result_both_count(self):
        r = self.run_
        r.step("score", 1, log="Traceback ...\n", result=passed(50))  # a good result.json, then a crash
        r.step("lora", 0, log="FAIL\n", result={"pass": False, "failures": ["fp32 loss curve"],
                                                 "figures": {"compared": 80}})
        r.step("perf", 124, log="step 3\n", result=passed(3))  # stopped by the budget's timeout
        r.step("nf4", 0, log="[  PASSED  ] 1 test.\n", gtest=gtest_report("COMPLETED", "FAILED"))
        s, code, checks = r.summarize()
        self.assertEqual(code, 1)
        self.assertIn("exit code 1", checks["score"]["reason"])
        self.assertIn("says FAIL", checks["lora"]["reason"])
        self.assertEqual(checks["lora"]["failures"], ["fp32 loss curve"])
        self.assertIn("budget ran out", checks["perf"]["reason"])
        self.assertIn("1 test(s) failed", checks["nf4"]["reason"])

    def test_gtest_log_when_no_report(self):
        r = self.run_
        r.step("nf4", 0, log="[==========] 1 test from 1 test suite ran.\n[  PASSED  ] 1 test.\n")
        _, code, checks = r.summarize()
        self.assertEqual((code, checks["nf4"]["verdict"], checks["nf4"]["compared"]), (0, "PASS", 1))

    def test_no_gpu_cpu_parts_pass_is_77(self):
        r = Run(CPU_ENV)
        self.addCleanup(r.cleanup)
        r.step("batches", 0, log="PASS\n", result=passed(13))
        r.step("resume", 0, log="PASS\n", result=passed(14))
        r.step("gloo", 0, log="PASS\n", result=passed(3))
        s, code, _ = r.summarize(budget=0, elapsed=900)
        self.assertEqual((code, s["verdict"], s["budget_left_s"]), (77, "SKIP (no GPU)", None))
        r.step("gloo", 1, log="FAIL\n", result=passed(3))  # the same step again: its last line counts
        _, code, _ = r.summarize(budget=0, elapsed=900)
        self.assertEqual(code, 1)

    def test_build_failure(self):
        r = self.run_
        r.step("build", 2, seconds=30, log="engine/train/trainer.cpp:12: error: expected ';'\n")
        s, code, _ = r.summarize()
        self.assertEqual((code, s["build"]["verdict"]), (1, "FAIL"))
        with open(os.path.join(r.results, "logs", "build.log")) as f:
            self.assertIn("error: expected", f.read())

    def test_huge_output_stays_under_limit(self):
        r = self.run_
        many = ["x" * 5000] * 2000
        for i in range(8):
            r.step(f"check{i}", 1, log="y" * (3 * summary.LOG_TAIL),
                   result={"pass": False, "failures": many, "figures": {f"f{k}": "z" * 3000 for k in range(5000)}})
        s, code, _ = r.summarize()
        self.assertEqual(code, 1)
        self.assertEqual(len(os.listdir(os.path.join(r.results, "logs"))), summary.MAX_LOGS)
        for name in os.listdir(os.path.join(r.results, "logs")):
            self.assertLessEqual(os.path.getsize(os.path.join(r.results, "logs", name)), summary.LOG_TAIL)


if __name__ == "__main__":
    unittest.main()
