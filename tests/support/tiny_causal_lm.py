"""Build a tiny random-init Llama causal LM with its own byte-level BPE tokenizer, saved to a folder.

Everything is made locally in about a second (no hub, no packaged weights), so backend tests can check
batching, padding, stop strings, scoring and adapters with exact comparisons. Token id 0 is ``<eos>``
(also the pad token): a model whose final norm is zeroed has all-zero logits and greedily emits EOS.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Aspirin treats headache and reduces fever in adults.",
    "Sentence: metformin lowers blood glucose. Answer: y",
    "Sentence: the patient walked home. Answer: n",
    "Question: which drug inhibits COX-1? (A) aspirin (B) insulin (C) heparin (D) warfarin",
    "ibuprofen|effect|gastric bleeding\nwarfarin|dosage|5 mg",
] * 4

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_lm(folder: Path, *, seed: int = 0, zero_final_norm: bool = False) -> Path:
    """Save a tiny `LlamaForCausalLM` (float32) and its tokenizer into `folder`; return `folder`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", pad_token="<eos>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=bpe.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        eos_token_id=0,
        pad_token_id=0,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    if zero_final_norm:
        with torch.no_grad():
            model.model.norm.weight.zero_()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_lora(base: Path, folder: Path, *, seed: int = 1) -> Path:
    """Save a PEFT LoRA adapter for the tiny model at `base`, with random (non-zero) B matrices so that it
    really changes the outputs; return `folder`."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(base, dtype=torch.float32)
    torch.manual_seed(seed)
    config = LoraConfig(r=4, lora_alpha=16, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    peft_model = get_peft_model(model, config)
    peft_model.save_pretrained(folder)
    return folder


BOS_CHAT_TEMPLATE = "{{ bos_token }}" + CHAT_TEMPLATE


def build_bos_tokenizer(folder: Path) -> Path:
    """Save a tiny tokenizer that adds ``<s>`` (id 1) as BOS to every encoded text and whose chat template
    also writes the BOS, like Llama-style templates; return `folder`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<eos>", "<s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS, trainer)
    bpe.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", eos_token="<eos>", pad_token="<eos>"
    )
    tokenizer.chat_template = BOS_CHAT_TEMPLATE
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    return folder
