;; The allocator never returns: the host is stuck copying the packet in
;; unless the deadline stops the guest.
(module
  (memory (export "memory") 16)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (loop $forever
      (local.set 0 (i32.add (local.get 0) (i32.const 1)))
      (br $forever))
    (i32.const 0))
  (func (export "verdict:verifier/completion@0.1.0#check") (param i32) (result i32)
    (i32.const 16)))
