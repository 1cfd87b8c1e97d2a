#include "loader/weights.h"

namespace pagoda {

void WeightMap::add(const std::string& name, Tensor tensor) {
  if (!tensors_.emplace(name, std::move(tensor)).second) fail("duplicate weight tensor ", name);
}

const Tensor& WeightMap::get(const std::string& name) const {
  const Tensor* t = find(name);
  if (t == nullptr) fail("model file has no tensor ", name);
  return *t;
}

const Tensor* WeightMap::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void WeightMap::release_pages(const Tensor& t) const {
  for (const MappedFile* file : mappings_) {
    if (file->contains(t.raw(), t.nbytes())) {
      file->release_pages(t.raw(), t.nbytes());
      return;
    }
  }
}

}  // namespace pagoda
