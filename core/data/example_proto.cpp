#include "core/data/example_proto.hpp"

#include <cstring>

#include "core/status.hpp"

namespace troupe::data {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

Error malformed(const std::string& what) {
  return data_loss("malformed tf.train.Example: " + what);
}

// A cursor over protobuf wire bytes.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool done() const { return p_ == end_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) throw malformed("truncated varint");
      uint8_t b = uint8_t(*p_++);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw malformed("varint longer than 10 bytes");
  }
  std::string_view bytes(size_t n) {
    if (n > size_t(end_ - p_)) throw malformed("length " + std::to_string(n) + " past the end");
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  std::string_view len_delimited() { return bytes(size_t(varint())); }
  /// Reads a tag: field number and wire type.
  std::pair<uint32_t, uint32_t> tag() {
    uint64_t t = varint();
    if ((t >> 3) == 0) throw malformed("field number 0");
    return {uint32_t(t >> 3), uint32_t(t & 7)};
  }
  void skip(uint32_t wire) {
    switch (wire) {
      case kVarint: varint(); return;
      case kFixed64: bytes(8); return;
      case kLen: len_delimited(); return;
      case kFixed32: bytes(4); return;
      default: throw malformed("unsupported wire type " + std::to_string(wire));
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// Visits every value of field 1 in a FloatList/Int64List, packed or not.
template <class OnPacked, class OnSingle>
void for_each_value_chunk(std::string_view list, uint32_t single_wire, OnPacked on_packed,
                          OnSingle on_single) {
  WireReader r(list);
  while (!r.done()) {
    auto [field, wire] = r.tag();
    if (field == 1 && wire == kLen) {
      on_packed(r.len_delimited());
    } else if (field == 1 && wire == single_wire) {
      on_single(r);
    } else {
      r.skip(wire);
    }
  }
}

float load_float(const char* p) {
  float f;
  std::memcpy(&f, p, 4);  // little-endian hosts only (x86-64, aarch64): the wire is LE
  return f;
}

// ---- writer ---------------------------------------------------------------------------------

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}
void put_tag(std::string& out, uint32_t field, uint32_t wire) {
  put_varint(out, field << 3 | wire);
}
void put_len(std::string& out, uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLen);
  put_varint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

std::string encode_feature(const Feature& f) {
  std::string list;
  switch (f.kind) {
    case FeatureKind::bytes_list:
      for (const auto& b : f.bytes) put_len(list, 1, b);
      break;
    case FeatureKind::float_list:
      if (!f.floats.empty())
        put_len(
            list, 1,
            std::string_view(reinterpret_cast<const char*>(f.floats.data()), f.floats.size() * 4));
      break;
    case FeatureKind::int64_list: {
      std::string packed;
      for (auto v : f.int64s) put_varint(packed, uint64_t(v));
      if (!f.int64s.empty()) put_len(list, 1, packed);
      break;
    }
    case FeatureKind::none: return {};
  }
  std::string feature;
  put_len(feature, uint32_t(f.kind), list);
  return feature;
}

}  // namespace

std::string_view feature_kind_name(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::bytes_list: return "bytes_list";
    case FeatureKind::float_list: return "float_list";
    case FeatureKind::int64_list: return "int64_list";
    case FeatureKind::none: return "none";
  }
  return "none";
}

size_t FeatureView::size() const {
  size_t n = 0;
  switch (kind) {
    case FeatureKind::float_list:
      for_each_value_chunk(
          list, kFixed32,
          [&](std::string_view packed) {
            if (packed.size() % 4)
              throw malformed("packed float list of " + std::to_string(packed.size()) + " bytes");
            n += packed.size() / 4;
          },
          [&](WireReader& r) { r.bytes(4), ++n; });
      return n;
    case FeatureKind::int64_list:
      for_each_value_chunk(
          list, kVarint,
          [&](std::string_view packed) {
            for (char c : packed) n += !(uint8_t(c) & 0x80);  // one terminating byte per value
          },
          [&](WireReader& r) { r.varint(), ++n; });
      return n;
    case FeatureKind::bytes_list: return bytes().size();
    case FeatureKind::none: return 0;
  }
  return 0;
}

void FeatureView::copy_floats(float* out) const {
  for_each_value_chunk(
      list, kFixed32,
      [&](std::string_view packed) {
        if (packed.size() % 4)
          throw malformed("packed float list of " + std::to_string(packed.size()) + " bytes");
        if (packed.empty()) return;  // out may be null for an empty list; memcpy forbids that
        std::memcpy(out, packed.data(), packed.size());
        out += packed.size() / 4;
      },
      [&](WireReader& r) { *out++ = load_float(r.bytes(4).data()); });
}

void FeatureView::copy_int64s(int64_t* out) const {
  for_each_value_chunk(
      list, kVarint,
      [&](std::string_view packed) {
        WireReader p(packed);
        while (!p.done()) *out++ = int64_t(p.varint());
      },
      [&](WireReader& r) { *out++ = int64_t(r.varint()); });
}

std::vector<std::string_view> FeatureView::bytes() const {
  std::vector<std::string_view> out;
  WireReader r(list);
  while (!r.done()) {
    auto [field, wire] = r.tag();
    if (field == 1 && wire == kLen)
      out.push_back(r.len_delimited());
    else
      r.skip(wire);
  }
  return out;
}

void for_each_feature(std::string_view record,
                      const std::function<void(std::string_view, const FeatureView&)>& fn) {
  WireReader example(record);
  while (!example.done()) {
    auto [field, wire] = example.tag();
    if (field != 1 || wire != kLen) {
      example.skip(wire);
      continue;
    }
    WireReader features(example.len_delimited());
    while (!features.done()) {
      auto [ffield, fwire] = features.tag();
      if (ffield != 1 || fwire != kLen) {
        features.skip(fwire);
        continue;
      }
      WireReader entry(features.len_delimited());
      std::string_view name;
      FeatureView view;
      while (!entry.done()) {
        auto [efield, ewire] = entry.tag();
        if (efield == 1 && ewire == kLen) {
          name = entry.len_delimited();
        } else if (efield == 2 && ewire == kLen) {
          WireReader feature(entry.len_delimited());
          view = {};
          while (!feature.done()) {
            auto [kfield, kwire] = feature.tag();
            if (kfield >= 1 && kfield <= 3 && kwire == kLen) {
              view.kind = FeatureKind(kfield);  // oneof: the last one set wins
              view.list = feature.len_delimited();
            } else {
              feature.skip(kwire);
            }
          }
        } else {
          entry.skip(ewire);
        }
      }
      fn(name, view);
    }
  }
}

std::string encode_example(const Example& example) {
  std::string features;
  for (const auto& [name, feature] : example) {
    std::string entry;
    put_len(entry, 1, name);
    put_len(entry, 2, encode_feature(feature));
    put_len(features, 1, entry);
  }
  std::string out;
  put_len(out, 1, features);
  return out;
}

Example decode_example(std::string_view record) {
  Example out;
  for_each_feature(record, [&](std::string_view name, const FeatureView& v) {
    Feature f;
    f.kind = v.kind;
    switch (v.kind) {
      case FeatureKind::float_list:
        f.floats.resize(v.size());
        v.copy_floats(f.floats.data());
        break;
      case FeatureKind::int64_list:
        f.int64s.resize(v.size());
        v.copy_int64s(f.int64s.data());
        break;
      case FeatureKind::bytes_list:
        for (auto b : v.bytes()) f.bytes.emplace_back(b);
        break;
      case FeatureKind::none: break;
    }
    out[std::string(name)] = std::move(f);
  });
  return out;
}

}  // namespace troupe::data
