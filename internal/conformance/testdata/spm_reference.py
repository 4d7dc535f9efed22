# The SentencePiece reference: reads a JSON request on standard input and
# writes the answer on standard output, with Debian's sentencepiece library
# (python3-sentencepiece).
#   {"train": {"input": "corpus.txt", "model_prefix": "...", ...}}
#       trains a model with those SentencePieceTrainer options; answers {}.
#   {"model": "tokenizer.model", "texts": ["...", ...]}
#       answers {"ids": [[...] per text], "version": "..."}: each text as
#       SentencePieceProcessor.encode gives it (no BOS or EOS).
import json
import sys

import sentencepiece as spm

req = json.load(sys.stdin)
if "train" in req:
    spm.SentencePieceTrainer.train(**req["train"])
    json.dump({"version": spm.__version__}, sys.stdout)
else:
    sp = spm.SentencePieceProcessor(model_file=req["model"])
    json.dump({"ids": [sp.encode(t) for t in req["texts"]], "version": spm.__version__}, sys.stdout)
