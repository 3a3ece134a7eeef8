// The JSON writer the ResourceSlice encoders (slice_builder.cc,
// slice_json.cc) share, and its string_view string.
#ifndef HCUDP_DRA_SLICE_WRITER_H_
#define HCUDP_DRA_SLICE_WRITER_H_

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

namespace hcudp::dra::internal {

using SliceWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void WriteString(SliceWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace hcudp::dra::internal

#endif  // HCUDP_DRA_SLICE_WRITER_H_
