// libloom.so is the whole-archive of loom_api (and the layers under it);
// this translation unit exists because a shared library needs one.
