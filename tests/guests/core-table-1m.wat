;; An initial table of 1,000,000 entries.
(module
  (memory (export "memory") 16)
  (table 1000000 funcref)
  ;; A bump allocator from 1 KiB (enough for the test packets).
  (global $next (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p
      (i32.and
        (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
        (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
    (global.set $next (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func (export "verdict:verifier/completion@0.1.0#check") (param i32) (result i32)
    (i32.store8 (i32.const 16) (i32.const 1))
    (i32.const 16)))
