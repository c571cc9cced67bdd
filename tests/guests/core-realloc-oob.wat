;; The allocator returns a pointer outside memory when the host copies the
;; packet in.
(module
  (memory (export "memory") 16)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (i32.const 0xFFFF0000))
  (func (export "verdict:verifier/completion@0.1.0#check") (param i32) (result i32)
    (i32.const 16)))
