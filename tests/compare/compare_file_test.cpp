// parse_compare: overrides reuse the experiment parser, and every refusal names the variant and
// the key before anything runs.
#include <gtest/gtest.h>

#include "coordinator/device_inventory.hpp"
#include "experiment/compare/compare_spec.hpp"
#include "experiment/experiment_file.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace troupe::experiment {
namespace {

using testing::comparison;

std::string refusal(const std::string& compare) {
  try {
    parse_compare(comparison(compare), "cmp.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << compare;
  return "";
}

TEST(CompareFile, VariantsOverrideTheBaseAndKeepItsSeed) {
  auto spec = parse_compare(comparison("compare:\n"
                                       "  stop: {steps: 7}\n"
                                       "  variants:\n"
                                       "    - {name: ring}\n"
                                       "    - name: hier\n"
                                       "      strategy: {cross_device_ops: {kind: hierarchical, "
                                       "num_packs: 2}}\n"
                                       "      data: {global_batch: 64}\n"
                                       "    - name: two_workers\n"
                                       "      workers: 2\n"
                                       "      strategy: {kind: multi_worker_mirrored, devices: "
                                       "[CPU:0], cross_device_ops: ~}\n"),
                            "cmp.yaml");
  ASSERT_EQ(spec.variants.size(), 3u);
  EXPECT_EQ(spec.name, "cmp");
  EXPECT_EQ(spec.stop.steps, 7);
  const auto& ring = spec.variants[0].experiment;
  const auto& hier = spec.variants[1].experiment;
  const auto& mwm = spec.variants[2].experiment;
  EXPECT_EQ(ring.strategy().cross_device_ops().kind(), "ring");
  EXPECT_EQ(hier.strategy().cross_device_ops().kind(), "hierarchical");
  EXPECT_EQ(hier.strategy().cross_device_ops().num_packs(), 2);
  EXPECT_EQ(hier.strategy().devices_size(), 2);  // merged, not replaced
  EXPECT_EQ(hier.data().global_batch(), 64);
  EXPECT_EQ(hier.data().examples(), 2048);
  EXPECT_EQ(mwm.strategy().kind(), "multi_worker_mirrored");
  EXPECT_EQ(spec.variants[2].workers, 2);
  for (const auto& v : spec.variants) {
    EXPECT_EQ(v.experiment.seed(), 3u);
    EXPECT_EQ(v.experiment.train().steps(), 7);  // the stopping rule's steps
  }
}

TEST(CompareFile, VariantYamlIsAPlainExperimentOfTheVariant) {
  auto spec = parse_compare(comparison("compare:\n  stop: {steps: 9}\n  variants:\n"
                                       "    - name: w2\n      workers: 2\n"
                                       "      strategy: {kind: multi_worker_mirrored, devices: "
                                       "[CPU:0], cross_device_ops: ~}\n"),
                            "cmp.yaml");
  auto e = parse_experiment(variant_experiment_yaml(spec, 0), "w2.yaml");
  EXPECT_EQ(e.strategy().kind(), "multi_worker_mirrored");
  EXPECT_EQ(e.train().steps(), 9);
  EXPECT_EQ(e.seed(), 3u);
}

TEST(CompareFile, UnknownOverrideKeyNamesVariantKeyAndPosition) {
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: a}\n"
                    "    - name: hier\n      strategy: {cross_device_op: {kind: hierarchical}}\n"),
            "cmp.yaml:13:18: variant \"hier\" (compare.variants[1]): strategy.cross_device_op: "
            "unknown key (expected one of: communication, cross_device_ops, devices, kind, mode, "
            "num_ps, partitioner, placement, replicas_to_aggregate, replication, "
            "total_num_replicas, workers)");
}

TEST(CompareFile, UnknownVariantKeyIsRefused) {
  EXPECT_NE(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: a, epochs: 3}\n")
                .find("compare.variants[0].epochs: unknown key"),
            std::string::npos);
}

TEST(CompareFile, SeedCannotBeOverridden) {
  EXPECT_NE(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: a, seed: 4}\n")
                .find("compare.variants[0].seed: unknown key"),
            std::string::npos);
}

TEST(CompareFile, NcclOnCpuReplicasIsRefusedNamingTheVariant) {
  auto message = refusal(
      "compare:\n  stop: {steps: 5}\n  variants:\n"
      "    - name: nccl\n      strategy: {cross_device_ops: {kind: nccl}}\n");
  EXPECT_NE(message.find("variant \"nccl\" (compare.variants[0]): strategy.cross_device_ops.kind: "
                         "nccl needs GPU devices"),
            std::string::npos)
      << message;
}

TEST(CompareFile, AStrategyKindThisBuildLacksIsRefused) {
  auto message = refusal(
      "compare:\n  stop: {steps: 5}\n  variants:\n"
      "    - name: ps\n      strategy: {kind: no_such_strategy}\n");
  EXPECT_NE(message.find("variant \"ps\" (compare.variants[0]): strategy.kind: expected one of"),
            std::string::npos)
      << message;
}

TEST(CompareFile, AGpuThisMachineLacksIsRefused) {
  const std::string gpu = "GPU:" + std::to_string(visible_gpu_count());
  auto message = refusal(
      "compare:\n  stop: {steps: 5}\n  variants:\n"
      "    - name: gpu\n      strategy: {devices: [" +
      gpu + "], cross_device_ops: {kind: ring}}\n");
  EXPECT_NE(message.find("variant \"gpu\" (compare.variants[0]): "
                         "compare.variants[0].strategy.devices[0]: " +
                         gpu + " is not on this machine"),
            std::string::npos)
      << message;
}

TEST(CompareFile, SeveralWorkersNeedMultiWorkerMirrored) {
  auto message =
      refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: w, workers: 2}\n");
  EXPECT_NE(message.find("variant \"w\" (compare.variants[0]): compare.variants[0].workers: 2 "
                         "workers need strategy.kind multi_worker_mirrored"),
            std::string::npos)
      << message;
}

TEST(CompareFile, MoreWorkersThanTheLauncherStartsAreRefused) {
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: w, workers: 300}\n"),
            "cmp.yaml:11:26: compare.variants[0].workers: 300 workers are more than troupe launch "
            "starts (at most 256)");
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: w, workers: 0}\n"),
            "cmp.yaml:11:26: compare.variants[0].workers: expected a positive integer, got \"0\"");
}

TEST(CompareFile, AVariantsStepsAreRefusedWhenTheRuleSetsThem) {
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants:\n"
                    "    - name: long\n      train: {steps: 50}\n"),
            "cmp.yaml:12:7: variant \"long\" (compare.variants[0]): "
            "compare.variants[0].train.steps: compare.stop.steps sets every variant's steps; "
            "remove train.steps from the variant");
  // Without stop.steps a variant's own steps bound it.
  auto spec = parse_compare(comparison("compare:\n  stop: {target_loss: 0.1}\n  variants:\n"
                                       "    - name: long\n      train: {steps: 50}\n"),
                            "cmp.yaml");
  EXPECT_EQ(spec.variants[0].experiment.train().steps(), 50);
}

TEST(CompareFile, CheckpointDirIsRefusedBecauseCompareChoosesTheRunDirectories) {
  auto message = refusal(
      "compare:\n  stop: {steps: 5}\n  variants:\n"
      "    - name: c\n      train: {checkpoint_dir: elsewhere}\n");
  EXPECT_NE(message.find("train.checkpoint_dir: troupe compare puts each variant's run under"),
            std::string::npos)
      << message;
}

TEST(CompareFile, StoppingRulesThatCanNeverTrigger) {
  EXPECT_EQ(refusal("compare:\n  stop: {target_loss: -0.5}\n  variants:\n    - {name: a}\n"),
            "cmp.yaml:9:23: compare.stop.target_loss: the loss is never below 0, so target_loss "
            "-0.5 would never be reached");
  EXPECT_EQ(refusal("compare:\n  stop: {steps: -3}\n  variants:\n    - {name: a}\n"),
            "cmp.yaml:9:17: compare.stop.steps: expected a positive integer, got \"-3\"");
  EXPECT_EQ(refusal("compare:\n  stop: {wall_seconds: 0}\n  variants:\n    - {name: a}\n"),
            "cmp.yaml:9:24: compare.stop.wall_seconds: a wall time of 0 s is over before the "
            "first step; give seconds > 0");
  EXPECT_EQ(refusal("compare:\n  stop: {}\n  variants:\n    - {name: a}\n"),
            "cmp.yaml:9:3: compare.stop: give at least one of steps, wall_seconds, target_loss");
  auto message = refusal(
      "compare:\n  stop: {target_loss: 0.2}\n  variants:\n"
      "    - name: quiet\n      train: {log_every: 0}\n");
  EXPECT_NE(message.find("variant \"quiet\" (compare.variants[0]): "
                         "compare.variants[0].train.log_every: the stopping rule is checked at "
                         "each logged step"),
            std::string::npos)
      << message;
}

TEST(CompareFile, SectionShapeErrors) {
  EXPECT_EQ(refusal(""),
            "cmp.yaml:1:1: compare: required key is missing (a comparison lists its "
            "variants under compare:)");
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants: []\n"),
            "cmp.yaml:10:3: compare.variants: expected at least one variant");
  EXPECT_EQ(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: a}\n"
                    "    - {name: a}\n"),
            "cmp.yaml:12:14: compare.variants[1].name: duplicate variant name \"a\"");
  EXPECT_NE(refusal("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: ../up}\n")
                .find("compare.variants[0].name: \"../up\" is not a plain directory name"),
            std::string::npos);
  EXPECT_NE(refusal("compare:\n  stop: {steps: 5}\n  variant: []\n")
                .find("compare.variant: unknown key (expected one of: stop, variants)"),
            std::string::npos);
}

TEST(CompareFile, AMistakeInTheBaseNamesNoVariant) {
  std::string text = comparison("compare:\n  stop: {steps: 5}\n  variants:\n    - {name: a}\n");
  text.replace(text.find("learning_rate: 0.1"), 18, "learning_rate: -1");
  try {
    parse_compare(text, "cmp.yaml");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("variant"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("optimizer.learning_rate"), std::string::npos);
  }
}

}  // namespace
}  // namespace troupe::experiment
