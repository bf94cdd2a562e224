// `troupe data synthesize ...`: writes a seeded synthetic data set as TFRecord files of
// tf.train.Example records (what a TensorFlow input pipeline would read), split into shards, so
// that experiments with `data: {kind: tfrecord}` have files to train on. Each shard is written to
// a temporary name and renamed into place: a reader never sees a half-written shard.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "core/data/example_proto.hpp"
#include "core/data/synthetic.hpp"
#include "core/data/synthetic_ratings.hpp"
#include "core/data/tfrecord.hpp"
#include "core/status.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace troupe::cli {
namespace {

struct SynthesizeOptions {
  std::string kind = "classification";
  int64_t examples = 4096;
  int64_t features = 16;
  int64_t classes = 4;
  int64_t shards = 4;
  uint64_t seed = 1;
  double separation = 3.0;
  int64_t users = 100;  // ratings
  int64_t items = 100;  // ratings
  int64_t rank = 2;     // ratings: width of the hidden factors
  std::string out;
};

// "train-00001-of-00004.tfrecord": TensorFlow's shard naming.
std::string shard_name(int64_t shard, int64_t shards) {
  char name[64];
  std::snprintf(name, sizeof name, "train-%05lld-of-%05lld.tfrecord", static_cast<long long>(shard),
                static_cast<long long>(shards));
  return name;
}

// Writes o.examples examples into o.shards TFRecord files under o.out, shard s holding a
// contiguous range of example indices; `next(i)` makes example i. Each shard is written to a
// temporary name and renamed when complete, so a reader never sees half a shard.
std::vector<std::string> write_shards(const SynthesizeOptions& o,
                                      const std::function<data::Example(int64_t)>& next) {
  fs::create_directories(o.out);
  std::vector<std::string> written;
  for (int64_t s = 0; s < o.shards; ++s) {
    const int64_t begin = o.examples * s / o.shards, end = o.examples * (s + 1) / o.shards;
    const fs::path final_path = fs::path(o.out) / shard_name(s, o.shards);
    const fs::path temp_path = final_path.string() + ".tmp-" + std::to_string(::getpid());
    {
      data::TFRecordWriter writer(temp_path.string());
      for (int64_t i = begin; i < end; ++i) writer.write(data::encode_example(next(i)));
      writer.close();
    }
    fs::rename(temp_path, final_path);
    written.push_back(final_path.string());
  }
  return written;
}

// Examples {x: float_list[features], label: int64_list[1]}; shard s holds a contiguous range of
// element indices, so the shards read in order give the synthetic set in order.
std::vector<std::string> write_classification(const SynthesizeOptions& o) {
  data::ClassificationOptions c;
  c.num_examples = o.examples;
  c.num_features = o.features;
  c.num_classes = o.classes;
  c.seed = o.seed;
  c.separation = o.separation;
  auto it = data::synthetic_classification(c).make_iterator();
  return write_shards(o, [&](int64_t i) {
    auto element = it.next();
    if (!element)
      throw internal_error("synthetic set ended after " + std::to_string(i) + " examples");
    data::Example example;
    example["x"] = data::Feature::of_floats(element->at(0).to_vector<float>());
    example["label"] = data::Feature::of_int64s({element->at(1).scalar<int64_t>()});
    return example;
  });
}

void usage(const po::options_description& options) {
  std::cout << "usage: troupe data synthesize --out DIR [--kind classification] [--examples N]\n"
               "         [--features F] [--classes C] [--shards S] [--seed N] [--separation X]\n\n"
               "Writes S TFRecord shards DIR/train-0000s-of-0000S.tfrecord of tf.train.Example\n"
               "records {x: float32[F], label: int64} (Gaussian blobs, one per class; the same\n"
               "data as `data: {kind: synthetic_classification}` with that seed), and prints the\n"
               "`data:` section that reads them. --kind ratings writes {ids: int64[2],\n"
               "rating: float32} of random (user, item) pairs rated by hidden rank-R factors\n"
               "(--users U --items I --rank R), for the embedding model: the same ratings as\n"
               "`data: {kind: synthetic_ratings}` with that seed reads from memory.\n\n"
            << options << std::flush;
}

// Examples {ids: int64_list[user, item], rating: float_list[1]} of random (user, item) pairs,
// rated by a hidden rank-`rank` factorisation (core/data/synthetic_ratings.hpp): the same
// examples as `data: {kind: synthetic_ratings}` with that seed reads from memory.
std::vector<std::string> write_ratings(const SynthesizeOptions& o) {
  data::RatingsOptions r;
  r.num_examples = o.examples;
  r.num_users = o.users;
  r.num_items = o.items;
  r.rank = o.rank;
  r.seed = o.seed;
  auto it = data::synthetic_ratings(r).make_iterator();
  return write_shards(o, [&](int64_t i) {
    auto element = it.next();
    if (!element)
      throw internal_error("synthetic ratings ended after " + std::to_string(i) + " examples");
    data::Example example;
    example["ids"] = data::Feature::of_int64s(element->at(0).to_vector<int64_t>());
    example["rating"] = data::Feature::of_floats({element->at(1).scalar<float>()});
    return example;
  });
}

}  // namespace

int run_data_command(const std::vector<std::string>& args) {
  SynthesizeOptions o;
  po::options_description options("troupe data synthesize options");
  options.add_options()("out", po::value(&o.out), "directory for the shards (created)")(
      "kind", po::value(&o.kind)->default_value(o.kind), "data set kind: classification, ratings")(
      "examples", po::value(&o.examples)->default_value(o.examples), "examples in all")(
      "features", po::value(&o.features)->default_value(o.features), "float32 features each")(
      "classes", po::value(&o.classes)->default_value(o.classes), "label values 0..C-1")(
      "shards", po::value(&o.shards)->default_value(o.shards), "number of files")(
      "seed", po::value(&o.seed)->default_value(o.seed), "generator seed")(
      "separation", po::value(&o.separation)->default_value(o.separation),
      "stddev of the class means (larger: easier)")(
      "users", po::value(&o.users)->default_value(o.users), "ratings: user ids 0..U-1")(
      "items", po::value(&o.items)->default_value(o.items), "ratings: item ids 0..I-1")(
      "rank", po::value(&o.rank)->default_value(o.rank), "ratings: width of the hidden factors")(
      "help,h", "show this help");
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    usage(options);
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "synthesize")
    throw po::error("unknown data command '" + args[0] + "' (known: synthesize)");
  po::variables_map vm;
  po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end()))
                .options(options)
                .run(),
            vm);
  if (vm.count("help")) {
    usage(options);
    return 0;
  }
  po::notify(vm);
  if (o.out.empty()) throw po::error("--out DIR is required");
  if (o.kind != "classification" && o.kind != "ratings")
    throw po::error("--kind: unknown kind '" + o.kind + "' (known: classification, ratings)");
  if (o.examples < 1) throw po::error("--examples must be >= 1");
  if (o.features < 1) throw po::error("--features must be >= 1");
  if (o.classes < 2) throw po::error("--classes must be >= 2");
  if (o.shards < 1 || o.shards > o.examples)
    throw po::error("--shards must be between 1 and --examples (" + std::to_string(o.examples) +
                    ")");
  if (!(o.separation > 0)) throw po::error("--separation must be > 0");

  if (o.kind == "ratings") {
    if (o.users < 1 || o.items < 1 || o.rank < 1)
      throw po::error("--users, --items and --rank must be >= 1");
    auto files = write_ratings(o);
    std::printf("wrote %lld ratings in %zu shard(s) to %s\n", static_cast<long long>(o.examples),
                files.size(), o.out.c_str());
    std::printf("data:\n  kind: tfrecord\n  files:\n");
    for (const auto& f : files) std::printf("    - %s\n", f.c_str());
    std::printf(
        "  features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}\n"
        "  label: rating\n");
    return 0;
  }
  auto files = write_classification(o);
  std::printf("wrote %lld examples in %zu shard(s) to %s\n", static_cast<long long>(o.examples),
              files.size(), o.out.c_str());
  std::printf("data:\n  kind: tfrecord\n  files:\n");
  for (const auto& f : files) std::printf("    - %s\n", f.c_str());
  std::printf(
      "  features: {x: {dtype: float32, shape: [%lld]}, label: {dtype: int64}}\n"
      "  label: label\n",
      static_cast<long long>(o.features));
  return 0;
}

}  // namespace troupe::cli
