include!("../model/build_rpath.rs");
