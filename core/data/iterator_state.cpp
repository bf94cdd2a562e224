#include "core/data/iterator_state.hpp"

#include <cstring>
#include <limits>

#include "core/crc32c.hpp"

namespace troupe::data {
namespace {
constexpr std::string_view kMagic = "TRPITER1";
constexpr uint64_t kMaxRank = 32;

Error corrupt(const std::string& what) { return data_loss("iterator state: " + what); }

uint64_t load_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | uint8_t(p[i]);
  return v;
}
void store_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char(v >> (8 * i)));
}
}  // namespace

void StateWriter::u64(uint64_t v) { store_u64(bytes_, v); }

void StateWriter::str(std::string_view s) {
  u64(s.size());
  bytes_.append(s.data(), s.size());
}

void StateWriter::tensor(const Tensor& t) {
  u64(uint64_t(t.dtype()));
  u64(t.shape().rank());
  for (auto d : t.shape().dims()) i64(d);
  bytes_.append(static_cast<const char*>(t.raw_data()), t.byte_size());
}

void StateWriter::element(const Element& e) {
  u64(e.size());
  for (const auto& t : e) tensor(t);
}

std::string_view StateReader::take(size_t n) {
  if (n > bytes_.size() - pos_)
    throw corrupt("truncated (wanted " + std::to_string(n) + " bytes at offset " +
                  std::to_string(pos_) + " of " + std::to_string(bytes_.size()) + ")");
  auto s = bytes_.substr(pos_, n);
  pos_ += n;
  return s;
}

uint64_t StateReader::u64() { return load_u64(take(8).data()); }

std::string StateReader::str() { return std::string(take(u64())); }

Tensor StateReader::tensor() {
  uint64_t raw = u64();
  if (raw > 255 || !is_valid_dtype(int(raw))) throw corrupt("invalid dtype " + std::to_string(raw));
  uint64_t rank = u64();
  if (rank > kMaxRank) throw corrupt("invalid tensor rank " + std::to_string(rank));
  std::vector<int64_t> dims(rank);
  int64_t elements = 1;  // what Shape::num_elements() will compute, refused before it overflows
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i] = i64();
    if (d < 0 || d > int64_t(bytes_.size()))
      throw corrupt("invalid dimension " + std::to_string(d));
    if (d != 0 && elements > std::numeric_limits<int64_t>::max() / d)
      throw corrupt("tensor shape overflows int64 at dimension " + std::to_string(i));
    elements *= d;
  }
  // The tensor's bytes follow: a shape needing more than is left is corrupt, not an allocation.
  uint64_t left = bytes_.size() - pos_;
  if (uint64_t(elements) > left / dtype_size(static_cast<DType>(raw)))
    throw corrupt("tensor of " + std::to_string(elements) + " " +
                  std::string(dtype_name(static_cast<DType>(raw))) +
                  " elements needs more than the " + std::to_string(left) + " bytes left");
  Tensor t(static_cast<DType>(raw), Shape{dims});
  auto bytes = take(t.byte_size());
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

Element StateReader::element() {
  uint64_t n = u64();
  if (n > bytes_.size()) throw corrupt("invalid element size " + std::to_string(n));
  Element e;
  for (uint64_t i = 0; i < n; ++i) e.push_back(tensor());
  return e;
}

void StateReader::expect_tag(std::string_view name) {
  uint64_t n = u64();
  auto got = take(n);
  if (got != name)
    throw corrupt("expected stage '" + std::string(name) + "', found '" + std::string(got) +
                  "' (state saved from a different pipeline?)");
}

std::string seal_state(const std::string& payload) {
  std::string out(kMagic);
  store_u64(out, payload.size());
  out += payload;
  store_u64(out, crc32c_mask(crc32c(payload)));
  return out;
}

std::string_view unseal_state(std::string_view sealed) {
  if (sealed.size() < kMagic.size() + 16 || sealed.substr(0, kMagic.size()) != kMagic)
    throw corrupt("bad magic or too short (" + std::to_string(sealed.size()) + " bytes)");
  uint64_t n = load_u64(sealed.data() + kMagic.size());
  if (n != sealed.size() - kMagic.size() - 16)
    throw corrupt("length field " + std::to_string(n) + " does not match " +
                  std::to_string(sealed.size()) + " bytes");
  auto payload = sealed.substr(kMagic.size() + 8, n);
  uint64_t stored = load_u64(sealed.data() + kMagic.size() + 8 + n);
  if (stored != crc32c_mask(crc32c(payload))) throw corrupt("checksum mismatch");
  return payload;
}

}  // namespace troupe::data
