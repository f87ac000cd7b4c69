#include "core/locality.h"

namespace loom {

std::vector<Locality>& jobLocality() {
  static std::vector<Locality> table;
  return table;
}

std::string& jobNamespace() {
  static std::string name;
  return name;
}

}  // namespace loom
