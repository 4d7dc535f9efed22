# Trains testdata/llama-bpe.model with Debian's sentencepiece (python3-sentencepiece
# 0.1.97): a BPE model with Llama 2's options (identity normalization, extra
# whitespace kept, digits split, byte fallback) and a user-defined piece.
# Run from this folder: /usr/bin/python3 train.py
import sentencepiece as spm

spm.SentencePieceTrainer.train(
    input="corpus.txt", model_prefix="llama-bpe", vocab_size=420, model_type="bpe",
    byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
    split_digits=True, allow_whitespace_only_pieces=True, user_defined_symbols=["<|im_start|>"],
    character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, num_threads=1, minloglevel=2)
