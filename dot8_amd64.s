#include "textflag.h"

// func dot8SSE2(a, b *int8, n int) int32
//
// 32 numbers a round, then 16: each 8 bytes widened to 16-bit words with
// their sign (unpacked against itself, shifted right arithmetically),
// multiplied and added in pairs into 32-bit sums (PMADDWD), four sums to
// an XMM register, two registers of sums.
TEXT ·dot8SSE2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	PXOR X6, X6
	PXOR X7, X7

loop32:
	CMPQ      CX, $32
	JL        loop16
	MOVOU     (SI), X0
	MOVOU     (DI), X1
	MOVOU     16(SI), X4
	MOVOU     16(DI), X5
	MOVO      X0, X2
	MOVO      X1, X3
	PUNPCKLBW X0, X0
	PUNPCKHBW X2, X2
	PUNPCKLBW X1, X1
	PUNPCKHBW X3, X3
	PSRAW     $8, X0
	PSRAW     $8, X2
	PSRAW     $8, X1
	PSRAW     $8, X3
	PMADDWL   X1, X0
	PMADDWL   X3, X2
	PADDL     X0, X6
	PADDL     X2, X7
	MOVO      X4, X2
	MOVO      X5, X3
	PUNPCKLBW X4, X4
	PUNPCKHBW X2, X2
	PUNPCKLBW X5, X5
	PUNPCKHBW X3, X3
	PSRAW     $8, X4
	PSRAW     $8, X2
	PSRAW     $8, X5
	PSRAW     $8, X3
	PMADDWL   X5, X4
	PMADDWL   X3, X2
	PADDL     X4, X6
	PADDL     X2, X7
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       loop32

loop16:
	CMPQ      CX, $16
	JL        done
	MOVOU     (SI), X0
	MOVOU     (DI), X1
	MOVO      X0, X2
	MOVO      X1, X3
	PUNPCKLBW X0, X0
	PUNPCKHBW X2, X2
	PUNPCKLBW X1, X1
	PUNPCKHBW X3, X3
	PSRAW     $8, X0
	PSRAW     $8, X2
	PSRAW     $8, X1
	PSRAW     $8, X3
	PMADDWL   X1, X0
	PMADDWL   X3, X2
	PADDL     X0, X6
	PADDL     X2, X7
	ADDQ      $16, SI
	ADDQ      $16, DI
	SUBQ      $16, CX
	JMP       loop16

done:
	PADDL  X7, X6
	PSHUFD $0x4E, X6, X0
	PADDL  X0, X6
	PSHUFD $0xB1, X6, X0
	PADDL  X0, X6
	MOVQ   X6, AX
	MOVL   AX, ret+24(FP)
	RET
